"""Layouts and pane moves: select-layout, swap-pane, break-pane, join-pane, respawn-pane."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from muxd.daemon.layouts import sets as layout_sets

from muxd.daemon.layouts import pane_moves
from muxd.daemon.commands.table import command
from muxd.daemon.layouts.layout import size_in_cells
from muxd.daemon.layouts.text import parse_layout
from muxd.daemon.panes.registry import Session, window_of
from muxd.daemon.panes.respawn import respawn
from muxd.daemon.panes.target import resolve_pane, resolve_session
from muxd.errors import BadRequest, Conflict
from muxd.protocol.messages import BreakPane, JoinPane, Ok, PaneReply, RespawnPane, SelectLayout, SwapPane

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon


@command(SelectLayout, target="pane")
async def select_layout(daemon: Daemon, req: SelectLayout, pane: Pane) -> Ok:
    window = window_of(pane)
    assert window.layout is not None
    before = window.layout_text()
    count = len(layout_sets.LAYOUTS)
    if req.next or req.previous:
        last = window.last_layout
        if req.next:
            index = 0 if last == -1 else (last + 1) % count
        else:
            index = count - 1 if last == -1 else (last - 1) % count
        window.select_layout(index)
    elif req.spread:
        window.zoomed = False
        window.layout.spread_out(pane)
        window.apply_layout()
    elif req.undo or (req.layout and _is_layout_text(req.layout)):
        text = window.old_layout if req.undo else req.layout
        if not text:
            return Ok(id=req.id)  # nothing to go back to
        window.arrange(parse_layout(text, window.panes))
    elif req.layout:
        window.select_layout(layout_sets.lookup(req.layout))
    elif window.last_layout != -1:  # no name: the last one chosen, again (tmux)
        window.select_layout(window.last_layout)
    window.old_layout = before
    daemon.attach_hub.changed(window.session)
    return Ok(id=req.id)


def _is_layout_text(text: str) -> bool:
    """A tmux layout string ("bb62,159x48,0,0{…}") rather than a layout's name."""
    return re.match(r"[0-9a-fA-F]{4},\d+x\d+,", text) is not None


@command(SwapPane, target="pane")
async def swap_pane(daemon: Daemon, req: SwapPane, target: Pane) -> Ok:
    if req.up or req.down:
        source = pane_moves.neighbour_in_order(target, -1 if req.up else 1)
    elif req.source:
        source = resolve_pane(daemon.registry, req.source)
    else:  # tmux's current pane: the active one of the target's window
        source = window_of(target).active_pane or target
    sessions = {window_of(source).session, window_of(target).session}
    pane_moves.swap(source, target, detached=req.detached)
    _changed(daemon, sessions)
    return Ok(id=req.id)


@command(JoinPane, target="pane")
async def join_pane(daemon: Daemon, req: JoinPane, target: Pane) -> Ok:
    # Without -s, tmux's current pane: here the newest session's active pane.
    source = resolve_pane(daemon.registry, req.source)
    size = None
    if req.size is not None:
        size = size_in_cells(req.size, target.columns if req.horizontal else target.lines)
    sessions = {window_of(source).session, window_of(target).session}
    pane_moves.join(daemon.registry, source, target, req.horizontal, size=size, before=req.before,
                    full=req.full, detached=req.detached)
    _changed(daemon, sessions)
    return Ok(id=req.id)


@command(BreakPane, target="pane")
async def break_pane(daemon: Daemon, req: BreakPane, pane: Pane) -> PaneReply:
    source = window_of(pane)
    session, index = source.session, None
    if req.session:
        session = resolve_session(daemon.registry, req.session)
        part = req.session.split(":", 1)[1] if ":" in req.session else ""
        if part.isdigit():
            index = int(part)
        elif part:
            raise BadRequest(f"break-pane -t wants a session or session:index, got {req.session!r}")
    pane_moves.break_out(daemon.registry, pane, session, index=index, name=req.name, detached=req.detached)
    _changed(daemon, {source.session, session})
    return PaneReply(id=req.id, pane=daemon.registry.pane_info(pane))


@command(RespawnPane, target="pane")
async def respawn_pane(daemon: Daemon, req: RespawnPane, pane: Pane) -> PaneReply:
    if pane.source != "muxd":  # tmux runs that program: respawn it there
        raise Conflict(f"pane {pane.id} is {pane.source}: its program is tmux's", pane=pane.id)
    respawn(daemon, pane, req.spawn, kill=req.kill)
    return PaneReply(id=req.id, pane=daemon.registry.pane_info(pane))


def _changed(daemon: Daemon, sessions: set[Session]) -> None:
    """Attached clients of these sessions fit the windows again and repaint."""
    for session in sessions:
        if session in daemon.registry.sessions:
            daemon.attach_hub.fit_session(session)

