"""Choosing and naming: select-pane, select-window, rename-window, rename-session.

What they change is what every attached client of the session shows, so each ends by waking
them. The prefix keys do the same through client_side/session_actions.py, which these share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.client_side import session_actions as actions
from muxd.daemon.client_side.session_actions import make_active
from muxd.daemon.commands.table import command
from muxd.daemon.panes.registry import Session, Window, window_of
from muxd.errors import NotFound
from muxd.protocol.messages import Ok, RenameSession, RenameWindow, SelectPane, SelectWindow

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon


@command(SelectPane, target="pane")
async def select_pane(daemon: Daemon, req: SelectPane, pane: Pane) -> Ok:
    window = window_of(pane)
    chosen: Pane | None = pane
    if req.last:
        chosen = window.last_pane
        if chosen is None or chosen not in window.panes:
            raise NotFound("no last pane", target=req.target)
    elif req.direction is not None:
        assert window.layout is not None
        chosen = window.layout.neighbour(pane, req.direction)  # type: ignore[assignment]
    if chosen is not None:  # no pane that way: nothing changes, as with the prefix arrows
        make_active(window, chosen)
    if req.title is not None:
        pane.set_title(req.title)  # until the program sets its own, as in tmux
    daemon.attach_hub.changed(window.session)
    return Ok(id=req.id)


@command(SelectWindow, target="window")
async def select_window(daemon: Daemon, req: SelectWindow, window: Window) -> Ok:
    session = window.session
    step = req.step
    if step == "toggle":  # -T: the target, unless it is current already: then the last window
        step = "last" if session.active_window is window else None
    if step == "last":
        actions.last_window(session)
    elif step is not None:
        actions.step_window(session, 1 if step == "next" else -1)
    else:
        session.active_window = window
    daemon.attach_hub.changed(session)
    return Ok(id=req.id)


@command(RenameWindow, target="window")
async def rename_window(daemon: Daemon, req: RenameWindow, window: Window) -> Ok:
    actions.rename_window(daemon.registry, window, req.name)
    daemon.attach_hub.changed(window.session)
    return Ok(id=req.id)


@command(RenameSession, target="session")
async def rename_session(daemon: Daemon, req: RenameSession, session: Session) -> Ok:
    daemon.registry.rename_session(session, req.name)
    daemon.attach_hub.changed(session)
    return Ok(id=req.id)
