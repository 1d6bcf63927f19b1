"""Pane commands: send-keys, capture-pane, list-panes, resize-pane, kill-pane."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.config import CAPTURE_MAX_LINES, MAX_ROW_NUMBER, SEND_KEYS_MAX_BYTES
from muxd.daemon.commands import command
from muxd.daemon.registry import pane_info
from muxd.daemon.target import resolve_session, resolve_window
from muxd.errors import BadRequest, Conflict
from muxd.keys import keys_to_bytes
from muxd.protocol.messages import (
    CapturePane, Captured, KillPane, ListPanes, Ok, PaneList, ResizePane, SendKeys,
)

if TYPE_CHECKING:
    from muxd.daemon.pane import Pane
    from muxd.daemon.server import Daemon


@command(SendKeys, target="pane")
async def send_keys(daemon: Daemon, req: SendKeys, pane: Pane) -> Ok:
    data = keys_to_bytes(req.keys, literal=req.literal, hex_bytes=req.hex)
    if len(data) > SEND_KEYS_MAX_BYTES:
        raise BadRequest(f"send-keys of {len(data)} bytes exceeds {SEND_KEYS_MAX_BYTES}")
    if pane.exited:
        raise Conflict(f"pane {pane.id} has exited", pane=pane.id)
    pane.send(data)  # refused (conflict) if the program leaves too much input unread
    return Ok(id=req.id)


def _check_line(value: int | None, name: str) -> None:
    if value is not None and not -CAPTURE_MAX_LINES <= value <= CAPTURE_MAX_LINES:
        raise BadRequest(f"{name} {value} is out of range ±{CAPTURE_MAX_LINES}")


@command(CapturePane, target="pane")
async def capture_pane(daemon: Daemon, req: CapturePane, pane: Pane) -> Captured:
    _check_line(req.start, "start")
    _check_line(req.end, "end")
    emulator = pane.emulator
    start = req.start
    if req.from_row is not None:
        if not 0 <= req.from_row <= MAX_ROW_NUMBER:
            raise BadRequest(f"from_row must be 0..{MAX_ROW_NUMBER}", field="from_row")
        start = req.from_row - emulator.rows_scrolled  # no await in between: the numbers hold
    text = emulator.capture(start, req.end, escapes=req.escapes, join_wrapped=req.join_wrapped)
    first, _ = emulator.span(start, req.end)
    return Captured(id=req.id, text=text, first_row=emulator.rows_scrolled + first)


@command(ListPanes)
async def list_panes(daemon: Daemon, req: ListPanes) -> PaneList:
    """All panes with -a or no target; a session's panes for a session target; else a window's."""
    registry = daemon.registry
    target = req.target
    if req.all or not target:
        panes = registry.all_panes()
    elif target.startswith("$") or (":" not in target and registry.session_named(target)):
        panes = resolve_session(registry, target).panes()
    else:
        panes = resolve_window(registry, target).panes
    return PaneList(id=req.id, panes=[pane_info(p) for p in panes])


@command(ResizePane, target="pane")
async def resize_pane(daemon: Daemon, req: ResizePane, pane: Pane) -> Ok:
    if not pane.resizable:
        raise Conflict(f"pane {pane.id} is {pane.source}: its size follows tmux's", pane=pane.id)
    columns = pane.columns if req.columns is None else req.columns
    lines = pane.lines if req.lines is None else req.lines
    daemon.check_size(columns, lines)
    pane.resize(columns, lines)
    return Ok(id=req.id)


@command(KillPane, target="pane")
async def kill_pane(daemon: Daemon, req: KillPane, pane: Pane) -> Ok:
    daemon.registry.remove_pane(pane)
    return Ok(id=req.id)
