"""`C-b :`: tmux's command prompt. The line is muxd commands (`split-window -h`,
`kill-window`, `ls`…; `;` between two, run in turn until one fails), each run as the `muxd`
CLI would run it — every command the CLI's table has, with its own options and errors — with
the attached client's active pane as the default `-t`. A line of output or an error shows in the status line; longer output in a view over the
window (q leaves), as tmux shows a command's output in view mode. As in tmux, `attach -t X`
and `new-session` switch this client to that session instead of needing a terminal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from muxd.config import COMMAND_PROMPT_HISTORY_MAX, COMMAND_PROMPT_TIMEOUT_S
from muxd.daemon.access.control import SYSTEM
from muxd.daemon.client_side.prefix_actions import run_binding
from muxd.daemon.client_side.prefix_keys import binding_for_command
from muxd.daemon.client_side.session_actions import select_target
from muxd.daemon.client_side.status_prompt import Prompt
from muxd.daemon.core.cli_lines import as_tmux_reads, command_parser, line_commands, run_cli, with_default_target
from muxd.daemon.panes.target import resolve_session
from muxd.errors import Forbidden, MuxdError

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Client

_running: set[asyncio.Task[None]] = set()  # strong references until each command ends
_history: list[str] = []  # the lines run, oldest first: one for the server, as in tmux


def open_command_prompt(client: Client) -> None:
    # The command runs with the server owner's rights: only the owner may type one.
    if client.connection.principal != SYSTEM:
        raise Forbidden("the command prompt is for the server's owner")
    del _history[:-COMMAND_PROMPT_HISTORY_MAX]
    client.prompt = Prompt(":", lambda line: run_line(client, line), history=_history)


def run_line(client: Client, line: str) -> None:
    """Run a line of muxd commands (`;` between them, as tmux's) one after the other; the
    first that fails ends the line, its error in the status line."""
    commands = line_commands(line)
    if commands:
        task = asyncio.create_task(_run_commands(client, commands))
        _running.add(task)
        task.add_done_callback(_running.discard)


async def _run_commands(client: Client, commands: list[list[str]]) -> None:
    for words in commands:
        try:
            if not await _run_command(client, words):
                return
        except MuxdError as exc:
            client.say(str(exc))
            return


async def _run_command(client: Client, words: list[str]) -> bool:
    """One command of a line; False if it failed (and said so). A default key's tmux command
    (copy-mode, choose-tree -Zw, send-prefix…) does what that key does, in this client."""
    words = as_tmux_reads(words)
    binding = binding_for_command(words)
    if binding is not None:
        run_binding(client, binding)
        client.hub.changed(client.session)
        return True
    command, parser = command_parser(words)
    # In a client, tmux's attach-session and new-session switch that client (no terminal needed).
    if command is not None and command.name == "attach-session":
        target = parser.parse_args(words[1:]).target
        session = resolve_session(client.daemon.registry, target)
        select_target(client.daemon.registry, session, target)
        client.switch_to(session)
        return True
    switch = None
    if command is not None and command.name == "new-session" and "-d" not in words:
        words = [words[0], "-d", "-P", *words[1:]]
        switch = _switch_to_new_pane
    pane = client.active_pane()
    argv = with_default_target(words, pane.id if pane is not None else None)
    return await _run(client, argv, pane.cwd() if pane is not None else None, switch)


def _switch_to_new_pane(client: Client, output: list[str]) -> bool:
    """After new-session: show the session of the pane it printed (True), as tmux does."""
    pane = next((p for p in client.daemon.registry.all_panes() if output and p.id == output[0]), None)
    if pane is None:
        return False
    client.switch_to(resolve_session(client.daemon.registry, pane.id))
    return True


async def _run(client: Client, argv: list[str], cwd: str | None,
               then: Callable[[Client, list[str]], bool] | None = None) -> bool:
    done = await run_cli(client.daemon.socket_path, argv, cwd=cwd, timeout_s=COMMAND_PROMPT_TIMEOUT_S,
                         env={"COLUMNS": str(client.columns)})
    if client.closed:
        return False
    if done.returncode is None:
        client.say(f"{argv[0]}: still running after {COMMAND_PROMPT_TIMEOUT_S:g}s, killed")
        return False
    if done.returncode != 0:
        client.say(done.error_line())
        return False
    lines = done.out.rstrip("\n").splitlines()
    if then is not None and then(client, lines):
        lines = []  # done: nothing to show
    if len(lines) == 1:
        client.say(lines[0])
    elif lines:
        client.show_text(lines)
    client.hub.changed(client.session)
    return True
