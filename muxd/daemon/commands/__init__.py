"""The command table: each request type maps to one small handler, declared next to its kin.

As tmux's cmd_entry, a command declares the kind of thing its request's `target` names. The
dispatcher resolves that target once, checks access against what it resolved, and hands the
resolved object to the handler: `async def handler(daemon, request, pane) -> Reply`. A command
without a target kind gets `async def handler(daemon, request) -> Reply`. Handlers raise
MuxdError subclasses for anything the client should hear about. Modules register with
`@command(RequestType, target=...)`.

A daemon imports only the modules of its first requests at start (`CommandTable`), the others
after its first reply or at the first request they alone answer: a cold start waits for less.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from muxd.daemon.commands.table import COMMANDS, Command

# What a first request usually is: new-session, ls, has-session, capture-pane, kill-server, status,
# and a tmux shim's display-message / list-* -F (formats: expand-format).
FIRST_MODULES = ("sessions", "panes", "server", "formats")
# Every command module (each registers itself at import), after FIRST_MODULES.
LATER_MODULES = (
    "agents",
    "layouts",  # select-layout, swap/join/break/respawn-pane
    "access",  # tokens, grants, audit, metrics
    "executions",  # the history
    "tasks",  # the task queue
    "buffers", "clients", "keys", "options", "selection",  # tmux's daily commands
    "tmux",  # watching panes that run in tmux
    "hooks",  # the agents' own hook events
    "events",  # the bus's recent events
    "event_hooks",  # set-hook, show-hooks: tmux's hooks on events
    "fleet",  # other hosts' panes on a shared database
    "host_actions",  # other hosts' actions for this host's panes (no request of its own: apply_host_action)
)


def _import(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(f"{__name__}.{name}")


class CommandTable(Mapping[type, Command]):
    """The command table, FIRST_MODULES' commands at first: a request type it lacks, or any
    look at the whole table, imports the rest (`load_all`) first."""

    def __init__(self) -> None:
        _import(FIRST_MODULES)
        self.loaded = False

    def load_all(self) -> None:
        if not self.loaded:
            _import(LATER_MODULES)
            self.loaded = True

    def loading_steps(self) -> list[Callable[[], None]]:
        """load_all as steps, one module each, for a daemon to take between its requests."""
        return [functools.partial(_import, (name,)) for name in LATER_MODULES] + [self.load_all]

    @staticmethod
    async def apply_host_action(daemon: Any, action: Any) -> Any:
        """Another host's action for this host's panes, applied by the commands of the local
        requests (commands/host_actions.py): the server reaches the commands through the table only."""
        from muxd.daemon.commands.host_actions import apply

        return await apply(daemon, action)

    def __getitem__(self, request_type: type) -> Command:
        if request_type not in COMMANDS:
            self.load_all()
        return COMMANDS[request_type]

    def __iter__(self) -> Iterator[type]:
        self.load_all()
        return iter(COMMANDS)

    def __len__(self) -> int:
        self.load_all()
        return len(COMMANDS)


def load_all() -> dict[type, Command]:
    """Import every command module (each registers itself) and return the table."""
    _import(FIRST_MODULES + LATER_MODULES)
    return COMMANDS
