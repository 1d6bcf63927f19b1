"""`C-b :`: tmux's command prompt. The line is a muxd command (`split-window -h`,
`kill-window`, `ls`…), run as the `muxd` CLI would run it — every command the CLI's table has,
with its own options and errors — with the attached client's active pane as the default
`-t`. A line of output or an error shows in the status line; longer output in a view over the
window (q leaves), as tmux shows a command's output in view mode."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from typing import TYPE_CHECKING

from muxd.config import COMMAND_PROMPT_TIMEOUT_S
from muxd.daemon.access import SYSTEM
from muxd.daemon.status_prompt import Prompt
from muxd.errors import BadRequest, Forbidden

if TYPE_CHECKING:
    from muxd.daemon.attached import AttachedClient

# Not passed on: the command runs as the socket owner, in no pane.
_ENV_DROPPED = ("MUXD", "MUXD_PANE", "MUXD_TOKEN", "MUXD_CLI_TOKEN", "TMUX", "TMUX_PANE")
_running: set[asyncio.Task[None]] = set()  # strong references until each command ends


def open_command_prompt(client: AttachedClient) -> None:
    # The command runs with the server owner's rights: only the owner may type one.
    if client.connection.principal != SYSTEM:
        raise Forbidden("the command prompt is for the server's owner")
    client.prompt = Prompt(":", lambda line: run_line(client, line))


def with_default_target(words: list[str], target: str | None) -> list[str]:
    """`words` with `-t target` after the command name when the command takes -t and the line
    gave none (options after `--` belong to the program, not to muxd)."""
    if target is None or not words:
        return words
    from muxd.cli.table import CLI_COMMANDS, implementation

    command = next((c for c in CLI_COMMANDS if words[0] in (c.name, *c.aliases)), None)
    if command is None:
        return words  # the CLI says what is wrong with it
    parser = argparse.ArgumentParser(add_help=False)
    implementation(command).configure(parser)
    options = words[1:words.index("--")] if "--" in words else words[1:]
    if "-t" not in parser._option_string_actions or any(w.startswith("-t") for w in options):
        return words
    return [words[0], "-t", target, *words[1:]]


def run_line(client: AttachedClient, line: str) -> None:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise BadRequest(f"bad quoting: {exc}") from None
    if not words:
        return
    pane = client.active_pane()
    argv = with_default_target(words, pane.id if pane is not None else None)
    task = asyncio.create_task(_run(client, argv, pane.cwd() if pane is not None else None))
    _running.add(task)
    task.add_done_callback(_running.discard)


async def _run(client: AttachedClient, argv: list[str], cwd: str | None) -> None:
    socket = client.daemon.socket_path
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROPPED}
    env.update(MUXD_SOCKET_DIR=str(socket.parent), COLUMNS=str(client.columns))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "muxd", "-L", socket.stem, *argv, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        cwd=cwd if cwd and os.path.isdir(cwd) else None)
    try:
        out, err = await asyncio.wait_for(process.communicate(), COMMAND_PROMPT_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        client.say(f"{argv[0]}: still running after {COMMAND_PROMPT_TIMEOUT_S:g}s, killed")
        return
    if client.closed:
        return
    if process.returncode != 0:
        # The CLI's error is its last line (argparse's usage comes before it), "muxd: " off.
        lines = err.decode(errors="replace").strip().splitlines() or [f"{argv[0]}: exit {process.returncode}"]
        client.say(lines[-1].removeprefix("muxd: "))
        return
    lines = out.decode(errors="replace").rstrip("\n").splitlines()
    if len(lines) == 1:
        client.say(lines[0])
    elif lines:
        client.show_text(lines)
    client.hub.changed(client.session)
