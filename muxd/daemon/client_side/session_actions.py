"""What prefix keys do to a session: tmux's new-window, select-window (-l), split-window,
select-pane (-l, next), resize-pane -Z, kill-pane, kill-window and rename-window, run for an
attached client (prefix_actions.py); and the window and pane `attach -t` makes current. The
commands that do the same (commands/selection.py) share them.

Each raises MuxdError for anything the user should read in the status line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.config import NAME_MAX_CHARS
from muxd.daemon.layouts.layout import Direction
from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.registry import Registry, Session, Window
from muxd.daemon.panes.target import resolve_pane
from muxd.errors import BadRequest, NotFound
from muxd.protocol.messages import Spawn

if TYPE_CHECKING:
    from muxd.daemon.client_side.host import AttachHost


def _active_window(session: Session) -> Window:
    if session.active_window is None:
        raise NotFound(f"session {session.name} has no windows")
    return session.active_window


def _active_pane(session: Session) -> Pane:
    window = _active_window(session)
    if window.active_pane is None:
        raise NotFound(f"window {window.id} has no panes")
    return window.active_pane


def _spawn_here(session: Session) -> Spawn:
    """The user's shell, started where the active pane's program is (as tmux -c #{pane_current_path})."""
    try:
        cwd = _active_pane(session).cwd()
    except NotFound:
        cwd = None
    return Spawn(cwd=cwd, interactive=True)  # a person's pane: it closes when its program exits


def new_window(daemon: AttachHost, session: Session) -> Window:
    reference = session.active_window.layout if session.active_window else None
    columns, lines = (reference.columns, reference.lines) if reference else (80, 24)
    spawn = _spawn_here(session)
    window = daemon.registry.new_window(session, "")
    try:
        daemon.spawn_pane(window, spawn, columns, lines)
    except Exception:
        daemon.registry.remove_window(window)
        raise
    return window


def select_window(session: Session, index: int) -> Window:
    window = next((w for w in session.windows if w.index == index), None)
    if window is None:
        raise NotFound(f"can't find window: {index}")
    session.active_window = window
    return window


def last_window(session: Session) -> Window:
    """The previously active window (tmux's last-window), made current."""
    window = session.last_window
    if window is None or window not in session.windows or window is session.active_window:
        raise NotFound("no last window")
    session.active_window = window
    return window


def step_window(session: Session, step: int) -> Window:
    current = _active_window(session)
    at = session.windows.index(current)
    session.active_window = session.windows[(at + step) % len(session.windows)]
    return session.active_window


def split(daemon: AttachHost, session: Session, horizontal: bool) -> Pane:
    window = _active_window(session)
    target = _active_pane(session)
    assert window.layout is not None
    if window.zoomed:
        window.toggle_zoom()
    _, size_new = window.layout.plan_split(target, horizontal)
    pane = daemon.spawn_pane(window, _spawn_here(session), *size_new)
    window.split(target, pane, horizontal)
    return pane


def select_pane(session: Session, direction: Direction) -> Pane | None:
    window = _active_window(session)
    current = _active_pane(session)
    assert window.layout is not None
    neighbour = window.layout.neighbour(current, direction)
    if isinstance(neighbour, Pane):
        make_active(window, neighbour)
        return neighbour
    return None


def next_pane(session: Session) -> Pane:
    """The pane after the active one in the window's order (tmux's select-pane -t :.+)."""
    window = _active_window(session)
    current = _active_pane(session)
    pane = window.panes[(window.panes.index(current) + 1) % len(window.panes)]
    make_active(window, pane)
    return pane


def last_pane(session: Session) -> Pane:
    """The previously active pane of the window (tmux's select-pane -l)."""
    window = _active_window(session)
    pane = window.last_pane
    if pane is None or pane not in window.panes or pane is window.active_pane:
        raise NotFound("no last pane")
    make_active(window, pane)
    return pane


def make_active(window: Window, pane: Pane) -> None:
    """Select `pane`; a zoomed window unzooms first, as tmux's select-pane without -Z."""
    if pane is window.active_pane:
        return
    if window.zoomed:
        window.toggle_zoom()
    window.active_pane = pane


def select_target(registry: Registry, session: Session, target: str | None) -> None:
    """`attach -t work:2`, `-t @3`, `-t %4`: that window (and pane) become the current ones,
    as tmux's attach-session does; a bare session name or $N changes nothing."""
    if not target or target.startswith("$") or (":" not in target and registry.session_named(target)):
        return
    pane = resolve_pane(registry, target)
    window = pane.window
    if not isinstance(window, Window) or window.session is not session:
        return
    session.active_window = window
    make_active(window, pane)


def toggle_zoom(session: Session) -> None:
    _active_window(session).toggle_zoom()


def kill_pane(registry: Registry, pane: Pane) -> None:
    if pane.window is not None and pane in registry.all_panes():
        registry.remove_pane(pane)


def kill_window(registry: Registry, window: Window) -> None:
    if window in window.session.windows:
        registry.remove_window(window)


def rename_window(registry: Registry, window: Window, name: str) -> None:
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    if not name:
        raise BadRequest("a window name cannot be empty")
    registry.rename_window(window, name[:NAME_MAX_CHARS])
