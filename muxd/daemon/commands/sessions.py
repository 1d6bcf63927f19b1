"""Sessions and windows: new-session, new-window, split-window, kill-*, has-session, lists."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from muxd.daemon.commands.table import command
from muxd.daemon.layouts.layout import size_in_cells
from muxd.daemon.panes.listings import session_infos, window_infos
from muxd.daemon.panes.registry import Session, Window, window_of
from muxd.daemon.panes.target import resolve_session
from muxd.protocol.messages import (
    HasSession, KillSession, KillWindow, ListSessions, ListWindows, NewSession, NewWindow, Ok,
    PaneReply, SessionList, SplitWindow, WindowList,
)

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon


@command(NewSession)
async def new_session(daemon: Daemon, req: NewSession) -> PaneReply:
    daemon.check_size(req.columns, req.lines)
    daemon.registry.check_pane_name_free(req.spawn.pane_name)
    session = daemon.registry.new_session(req.name)
    session_size = (req.columns, req.lines)
    try:
        window = daemon.registry.new_window(session, req.window_name or "")
        pane = daemon.spawn_pane(window, req.spawn, *session_size)
    except Exception:
        daemon.registry.remove_session(session)
        raise
    return PaneReply(id=req.id, pane=daemon.registry.pane_info(pane), execution_id=daemon.executions.program_id(pane))


@command(NewWindow, target="session")
async def new_window(daemon: Daemon, req: NewWindow, session: Session) -> PaneReply:
    daemon.registry.check_pane_name_free(req.spawn.pane_name)
    # A new window takes the size of the session's windows (which follow the attached clients).
    reference = session.active_window.layout if session.active_window else None
    columns, lines = (reference.columns, reference.lines) if reference else (80, 24)
    window = daemon.registry.new_window(session, req.name or "", select=not req.detached)
    try:
        pane = daemon.spawn_pane(window, req.spawn, columns, lines)
    except Exception:
        daemon.registry.remove_window(window)
        raise
    daemon.attach_hub.changed(session)
    return PaneReply(id=req.id, pane=daemon.registry.pane_info(pane), execution_id=daemon.executions.program_id(pane))


@command(SplitWindow, target="pane")
async def split_window(daemon: Daemon, req: SplitWindow, target: Pane) -> PaneReply:
    window = window_of(target)
    daemon.registry.check_pane_name_free(req.spawn.pane_name)
    # Halve the target pane (or cut -l's size off it), leaving a one-cell border as tmux does.
    assert window.layout is not None
    size = None
    if req.size is not None:  # N% is of the target pane, or with -f of the window
        whole = window.layout if req.full else target
        size = size_in_cells(req.size, whole.columns if req.horizontal else whole.lines)
    size_new = window.plan_split(target, req.horizontal, size=size, before=req.before, full=req.full)
    active = window.active_pane
    spawn = req.spawn
    if target.tmux_shim and not spawn.tmux_shim:  # a shimmed pane's halves stay in "tmux"
        spawn = msgspec.structs.replace(spawn, tmux_shim=True)
    pane = daemon.spawn_pane(window, spawn, *size_new)
    window.split(target, pane, req.horizontal, size=size, before=req.before, full=req.full)
    if req.detached:
        window.active_pane = active
    daemon.attach_hub.changed(window.session)
    return PaneReply(id=req.id, pane=daemon.registry.pane_info(pane), execution_id=daemon.executions.program_id(pane))


@command(KillSession, target="session")
async def kill_session(daemon: Daemon, req: KillSession, session: Session) -> Ok:
    daemon.registry.remove_session(session)
    return Ok(id=req.id)


@command(KillWindow, target="window")
async def kill_window(daemon: Daemon, req: KillWindow, window: Window) -> Ok:
    daemon.registry.remove_window(window)
    return Ok(id=req.id)


@command(HasSession, target="session")
async def has_session(daemon: Daemon, req: HasSession, session: Session) -> Ok:
    return Ok(id=req.id)


@command(ListSessions)
async def list_sessions(daemon: Daemon, req: ListSessions) -> SessionList:
    return SessionList(id=req.id, sessions=session_infos(daemon.registry, daemon.attach_hub.clients.values(),
                                                              daemon.attention.board))


@command(ListWindows)
async def list_windows(daemon: Daemon, req: ListWindows) -> WindowList:
    if req.all:
        sessions = daemon.registry.sessions
    else:
        sessions = [resolve_session(daemon.registry, req.target)]
    return WindowList(id=req.id, windows=window_infos(sessions, daemon.attention.board))
