"""A key in copy mode, for an attached client: the user's binding of it in the copy-mode table
the mode-keys option picks (`bind -T copy-mode-vi v send -X begin-selection`), else the table's
default (copy_keys.py), and what its command does — the copy mode moves, a selection is kept
as a buffer (and piped, for copy-pipe), a search prompt opens, or the mode ends. A bound line
may mix copy-mode commands with any other (`send -X copy-selection-and-cancel \\; display hi`):
those run as the command prompt runs them.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING

from muxd.config import COMMAND_PROMPT_TIMEOUT_S
from muxd.daemon.client_side.copy_keys import copy_command, default_command, table_for
from muxd.daemon.client_side.copy_mode import COPY, COPY_KEEP, COPY_STAY, LEAVE, SEARCH_DOWN, SEARCH_UP, CopyMode
from muxd.daemon.client_side.status_prompt import Prompt
from muxd.daemon.core.cli_lines import line_commands
from muxd.errors import MuxdError

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Client
    from muxd.daemon.panes.pane import Pane

_pipes: set[asyncio.Task[None]] = set()  # strong references until each copy-pipe's command ends


def copy_mode_key(client: Client, pane: Pane, copy: CopyMode, key: bytes) -> None:
    """Do what `key` is bound to in `pane`'s copy mode (nothing: a key no table binds)."""
    table = table_for(client.mode_keys(pane))
    bound = client.daemon.registry.key_bindings.lookup(table, key)
    if bound is None:
        name = default_command(table, key)
        if name is not None:
            run_copy_command(client, pane, copy, name, [])
        return
    if bound.command is None:  # a default key unbound
        return
    try:
        for words in line_commands(bound.command):
            parsed = copy_command(words)
            if parsed is None:
                client.run_line(shlex.join(words))
            elif not run_copy_command(client, pane, copy, *parsed):
                return  # copy mode ended: the rest of the line's copy commands have none to act on
    except MuxdError as exc:
        client.say(exc.message)


def run_copy_command(client: Client, pane: Pane, copy: CopyMode, name: str, arguments: list[str]) -> bool:
    """One copy-mode command (`send -X NAME ARGUMENTS…`) on `pane`'s copy mode; False when copy
    mode ended."""
    from muxd.attach.selection import pane_geometry

    argument = arguments[0] if arguments else None
    outcome = copy.command(name, pane_geometry(pane.emulator), argument)
    if outcome in (SEARCH_DOWN, SEARCH_UP):
        client.prompt = Prompt(f"({outcome}) ", lambda text: copy.search(
            text, outcome == SEARCH_DOWN, pane_geometry(pane.emulator)))
    if outcome in (COPY, COPY_STAY, COPY_KEEP):
        text = client.copy_selection(pane, copy, keep=outcome == COPY_KEEP)
        pipe_to = argument if name.startswith("copy-pipe") else None
        if pipe_to is None and name.startswith("copy-pipe"):
            pipe_to = client.daemon.registry.options.lookup("copy-command") or None
        if pipe_to and text:
            task = asyncio.create_task(_pipe(pipe_to, text))
            _pipes.add(task)
            task.add_done_callback(_pipes.discard)
    if outcome in (COPY, LEAVE):
        client.hub.copy_modes.pop(pane.id, None)
        return False
    return pane.id in client.hub.copy_modes


async def _pipe(command: str, text: str) -> None:
    """copy-pipe: the copied text to `command`'s standard input (tmux runs it with /bin/sh -c);
    it is killed if it still runs after the command prompt's time."""
    process = await asyncio.create_subprocess_shell(
        command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    try:
        await asyncio.wait_for(process.communicate(text.encode("utf-8", "surrogateescape")), COMMAND_PROMPT_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
