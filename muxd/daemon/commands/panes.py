"""Pane commands: send-keys, capture-pane (and its HTML, screen-html), list-panes, show-pane,
resize-pane, kill-pane."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from muxd.config import CAPTURE_MAX_LINES, MAX_ROW_NUMBER, SCREEN_WAIT_MAX_S, SEND_KEYS_MAX_BYTES
from muxd.daemon.commands.table import command
from muxd.daemon.layouts.pane_resize import absolute_size, resize_in_layout
from muxd.daemon.panes.listings import pane_infos
from muxd.daemon.panes.registry import window_of
from muxd.daemon.panes.target import resolve_session, resolve_window
from muxd.errors import BadRequest, Conflict
from muxd.keys import keys_to_bytes
from muxd.protocol.messages import (
    CapturePane, Captured, KillPane, ListPanes, Ok, PaneList, PaneReply, ResizePane, SendKeys, ShowPane,
)
from muxd.protocol.screen_messages import ScreenHtml, ScreenHtmlReply

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon


@command(SendKeys, target="pane")
async def send_keys(daemon: Daemon, req: SendKeys, pane: Pane) -> Ok:
    # Keys as the program asked for them (application cursor keys, keypad), as tmux sends them.
    data = keys_to_bytes(req.keys, literal=req.literal, hex_bytes=req.hex, modes=pane.emulator.private_modes)
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


@command(ScreenHtml, target="pane")
async def screen_html(daemon: Daemon, req: ScreenHtml, pane: Pane) -> ScreenHtmlReply:
    _check_line(req.start, "start")
    _check_line(req.end, "end")
    if not 0 <= req.wait_s <= SCREEN_WAIT_MAX_S:
        raise BadRequest(f"wait_s must be 0..{SCREEN_WAIT_MAX_S:g}", field="wait_s")
    version = await _screen_changed(daemon, pane, req)
    emulator = pane.emulator
    html = emulator.screen_html(req.start, req.end)
    first, _ = emulator.span(req.start, req.end)
    x, y = emulator.cursor
    return ScreenHtmlReply(id=req.id, pane=pane.id, html=html, columns=emulator.columns, lines=emulator.lines,
                           cursor_x=x, cursor_y=y, cursor_visible=emulator.cursor_visible,
                           first_row=emulator.rows_scrolled + first, version=version, exited=pane.exited,
                           agent_state=pane.agent.activity.state if pane.agent.is_agent else "",
                           work_version=daemon.screen_watch.work_version(pane.id))


def _cursor(pane: Pane) -> tuple[int, int, bool]:
    x, y = pane.emulator.cursor
    return x, y, pane.emulator.cursor_visible


async def _screen_changed(daemon: Daemon, pane: Pane, req: ScreenHtml) -> int:
    """The screen's version once it differs from version `req.after` (a respawned pane's new
    emulator counts from 0 again: any other number is a change), the pane's work version from
    `req.after_work` or its cursor from `req.after_cursor`, or after `req.wait_s` with none."""
    deadline = time.monotonic() + req.wait_s
    watch, after = daemon.screen_watch, req.after
    while True:
        version, _ = pane.emulator.changed_rows(-1 if after is None else after)
        left = deadline - time.monotonic()
        if (after is None or version != after or pane.exited or left <= 0
                or req.after_work is not None and watch.work_version(pane.id) != req.after_work
                or req.after_cursor is not None and _cursor(pane) != req.after_cursor):
            return version
        await watch.next_change(pane.id, left)


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
    return PaneList(id=req.id, panes=pane_infos(registry, panes, screen=req.screen))


@command(ShowPane, target="pane")
async def show_pane(daemon: Daemon, req: ShowPane, pane: Pane) -> PaneReply:
    return PaneReply(id=req.id, pane=daemon.registry.pane_info(pane, screen=True))


@command(ResizePane, target="pane")
async def resize_pane(daemon: Daemon, req: ResizePane, pane: Pane) -> Ok:
    if not pane.resizable:
        raise Conflict(f"pane {pane.id} is {pane.source}: its size follows tmux's", pane=pane.id)
    window = window_of(pane)
    if req.zoom:  # tmux: unzoom a zoomed window, else zoom this pane
        if not window.zoomed:
            window.active_pane = pane
        window.toggle_zoom()
    elif len(window.panes) == 1:
        # Alone in its window, the pane's size is the window's (muxd's windows have no other size
        # until a client attaches, which then sets it).
        if req.direction is not None:
            raise BadRequest(f"pane {pane.id} is alone in its window: no divider to move", pane=pane.id)
        columns = absolute_size(req.columns, req.columns_percent, pane.columns)
        lines = absolute_size(req.lines, req.lines_percent, pane.lines)
        assert columns is not None and lines is not None
        daemon.check_size(columns, lines)
        window.resize(columns, lines)
        window.layout.remember()  # type: ignore[union-attr]
    else:
        resize_in_layout(window, pane, req)
    daemon.attach_hub.changed(window.session)
    return Ok(id=req.id)


@command(KillPane, target="pane")
async def kill_pane(daemon: Daemon, req: KillPane, pane: Pane) -> Ok:
    daemon.registry.remove_pane(pane)
    return Ok(id=req.id)
