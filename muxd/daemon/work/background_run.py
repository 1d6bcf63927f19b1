"""A command run in a new background window of the newest session, as a recorded execution
(`muxd run` without -t, a task's verification). The window opens as tmux's `new-window -d`:
the session's current window stays current. Whether it closes when the command ends is the
Spawn's (remove_on_exit): `muxd run`'s do unless --keep, a task's check is closed by its checker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from muxd.executions.record import Execution
from muxd.protocol.messages import Spawn

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Registry, Window
    from muxd.daemon.work.executions import ExecutionService

DEFAULT_SIZE = (80, 24)


class SpawnPane(Protocol):
    """The daemon's way to start a program in a new pane (Daemon.spawn_pane)."""

    def __call__(self, window: Window, spawn: Spawn, columns: int, lines: int, *,
                 link: dict[str, object] | None = None) -> Pane: ...


def run_in_background_window(registry: Registry, spawn_pane: SpawnPane, executions: ExecutionService,
                             spawn: Spawn, *, window_name: str = "",
                             link: dict[str, object] | None = None) -> tuple[Pane, Execution]:
    """The new pane and its program's execution; `link` sets fields of the execution (task_id…)."""
    session = registry.sessions[-1] if registry.sessions else None
    if session is None:
        session = registry.new_session(None)
        window = registry.new_window(session, window_name)
        size = DEFAULT_SIZE
    else:
        reference = session.active_window.layout if session.active_window else None
        size = (reference.columns, reference.lines) if reference else DEFAULT_SIZE
        window = registry.new_window(session, window_name, select=False)
    try:
        pane = spawn_pane(window, spawn, *size, link=link)
    except Exception:
        registry.remove_window(window)
        raise
    run = executions.panes[pane.id]
    assert run.program is not None
    return pane, run.program
