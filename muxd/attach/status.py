"""The status line at the bottom of a client: session, window list, agent state, or a message."""

from __future__ import annotations

from dataclasses import dataclass

from muxd.emulator.cell import Cell, Style

from muxd.emulator.cell_layout import styled_cells, text_width
from .frame import FrameRow

# tmux's defaults: status-style bg=green,fg=black; message-style bg=yellow,fg=black (pyte
# calls ANSI yellow "brown").
STATUS_STYLE: Style = Cell(" ", fg="black", bg="green")[1:]  # type: ignore[assignment]
MESSAGE_STYLE: Style = Cell(" ", fg="black", bg="brown")[1:]  # type: ignore[assignment]
# tmux's status-left-length: a long session name does not push the window list away.
SESSION_NAME_MAX_CELLS = 10
_CACHE_MAX_ENTRIES = 64


@dataclass(frozen=True)
class WindowTab:
    """One entry of the window list."""

    index: int
    name: str
    active: bool
    last: bool = False
    zoomed: bool = False
    alerts: str = ""  # tmux's alert flags: '#' activity, '!' bell, '~' silence
    needs: str = ""   # muxd's agent flags: '?' waiting, '$' limited, 'X' failed, '+' finished
    style: Style | None = None  # window-status-bell-style / -activity-style of a flagged tab

    def label(self) -> str:
        """tmux's `#I:#W#F` (flags `#!~`, '*' active, '-' last, 'Z' zoomed), then the agent flags."""
        current = "*" if self.active else "-" if self.last else ""
        return f"{self.index}:{self.name}{self.alerts}{current}{'Z' if self.zoomed else ''}{self.needs}"


@dataclass(frozen=True)
class StatusLine:
    """The bottom row of a client."""

    session: str
    windows: tuple[WindowTab, ...] = ()
    right: str = ""  # e.g. 'claude · Thinking 12s · 4.8k tok': right-aligned, cut if no room
    message: str | None = None  # replaces the whole line (prompts, confirmations, notices)
    # With a message: the cursor's column in it (a prompt being typed); None keeps the
    # cursor in the active pane.
    message_cursor: int | None = None
    style: Style = STATUS_STYLE            # status-style
    message_style: Style = MESSAGE_STYLE   # message-style
    left: str | None = None  # status-left expanded; None: "[session] ", the name cut to 10 cells

    def left_text(self) -> str:
        return "".join(text for text, _ in self.left_pieces())

    def left_pieces(self) -> list[tuple[str, Style]]:
        """The left side as (text, style): status-left, then the tabs (a flagged one in its style)."""
        left = f"[{cut_cells(self.session, SESSION_NAME_MAX_CELLS)}] " if self.left is None else self.left
        pieces = [(left, self.style)]
        for number, tab in enumerate(self.windows):
            if number:
                pieces.append((" ", self.style))
            pieces.append((tab.label(), tab.style or self.style))
        return pieces


def cut_cells(text: str, cells: int) -> str:
    """`text` cut to at most `cells` cells (a wide character that would cross the edge goes)."""
    if text_width(text) <= cells:
        return text
    out = []
    used = 0
    for char in text:
        used += max(text_width(char), 0)
        if used > cells:
            break
        out.append(char)
    return "".join(out)


_cache: dict[tuple[StatusLine, int], FrameRow] = {}
# The last one asked for, known by identity: a client reuses its StatusLine between frames, and
# hashing one (its tabs, each field) to find it in `_cache` is most of what a frame's status costs.
_last: tuple[StatusLine | None, int, FrameRow] = (None, 0, ())


def status_row(status: StatusLine, columns: int) -> FrameRow:
    """The status line as `columns` cells (memoised: it rarely changes between frames)."""
    global _last
    last_status, last_columns, row = _last
    if status is last_status and columns == last_columns:
        return row
    key = (status, columns)
    row = _cache.get(key)  # type: ignore[assignment]
    if row is None:
        if len(_cache) >= _CACHE_MAX_ENTRIES:
            _cache.clear()
        row = _cache[key] = _render(status, columns)
    _last = (status, columns, row)
    return row


def _render(status: StatusLine, columns: int) -> FrameRow:
    if status.message is not None:
        return tuple(styled_cells([(status.message, status.message_style)], columns))
    pieces = status.left_pieces()
    left_cells = sum(text_width(text) for text, _ in pieces)
    right = status.right
    if right:
        room = columns - left_cells - 1  # at least one space between the two sides
        if room > 0:
            right = cut_cells(right, room)
            gap = columns - left_cells - text_width(right)
            pieces.append((" " * gap + right, status.style))
    pieces.append(("", status.style))  # what is left is padded in the status style, not a tab's
    return tuple(styled_cells(pieces, columns))
