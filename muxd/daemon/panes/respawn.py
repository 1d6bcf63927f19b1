"""respawn-pane: a new program in an existing pane, which keeps its id, name, place and scrollback.

As tmux, a pane whose program still runs is refused unless the caller asks to kill it (-k).
The old program's record in the history ends (cancelled if it still ran); the new one is
followed as any pane's program is.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from muxd.daemon.panes.agent_argv import with_agent_hooks
from muxd.daemon.panes.registry import window_of
from muxd.daemon.panes.shell_command import command_argv
from muxd.errors import Conflict
from muxd.executions.shell import integrated_argv
from muxd.protocol.messages import Spawn

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Registry, Session


class AttachedViews(Protocol):
    """What respawn tells the attached clients (daemon/client_side/hub.py)."""

    @property
    def copy_modes(self) -> MutableMapping[str, Any]: ...  # pane id -> its copy mode
    def changed(self, session: Session | None = None) -> None: ...


class PaneKeeper(Protocol):
    """What respawn uses of the daemon (server.py): the registry, the environment a pane's
    program gets, and what follows a program (history, detection, watchdog)."""

    @property
    def registry(self) -> Registry: ...
    @property
    def attach_hub(self) -> AttachedViews: ...
    def pane_env(self, extra: dict[str, str]) -> dict[str, str]:
        """The environment of a pane's program with `extra` (BadRequest if a variable is malformed)."""
    def follow(self, pane: Pane) -> None: ...
    def unfollow(self, pane: Pane) -> None: ...


def respawn(daemon: PaneKeeper, pane: Pane, spawn: Spawn, *, kill: bool) -> None:
    """Start `spawn`'s command (empty: the pane's own again) in `pane` (Conflict if it runs
    and not `kill`; SpawnFailed if the program cannot start)."""
    window = window_of(pane)
    if not pane.exited and not kill:
        where = f"{window.session.name}:{window.index}.{daemon.registry.pane_index(pane)}"
        raise Conflict(f"respawn pane failed: pane {where} still active", pane=pane.id)
    argv = command_argv(list(spawn.command)) if spawn.command else list(pane.command)
    cwd = os.path.expanduser(spawn.cwd) if spawn.cwd else pane.start_cwd
    checked = daemon.pane_env(dict(spawn.env))  # refuses a malformed variable
    env = {**pane.env, **{key: checked[key] for key in spawn.env}}
    daemon.unfollow(pane)
    daemon.attach_hub.copy_modes.pop(pane.id, None)
    try:
        pane.respawn(argv, cwd, env, integrated_argv(with_agent_hooks(argv, env), env))
    finally:
        if pane.pid is not None and not pane.exited:
            daemon.follow(pane)
    daemon.attach_hub.changed(window.session)
