"""A pane's screen as HTML, for the web view (`muxd web`): read as capture-pane reads it."""

from __future__ import annotations

from muxd.protocol.fields import Target
from muxd.protocol.pane_messages import _Message


class ScreenHtml(_Message, tag="screen-html"):
    id: int
    target: Target | None = None
    start: int | None = None  # rows as capture-pane numbers them; None: the first visible row
    end: int | None = None    # None: the last visible row


class ScreenHtmlReply(_Message, tag="screen-html-reply"):
    id: int
    pane: str       # the pane the target resolved to ("%3")
    html: str       # escaped text in <span class=…> runs, one line a row (emulator/screen_html.py)
    columns: int
    lines: int
    cursor_x: int
    cursor_y: int
    cursor_visible: bool
    first_row: int = 0  # running number of the first row given (as Captured.first_row)
