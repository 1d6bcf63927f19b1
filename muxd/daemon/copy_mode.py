"""Copy mode of a pane: how far back into its scrollback the attached clients look, and the
text selected with the mouse.

Pure: the state is one offset per pane (0 = the live screen) and a selection, shared by every
client of the session as in tmux (the mode belongs to the pane, not to a client).
Selection points are (running row number, column): a row's number (Emulator.rows_scrolled
+ its visible row) never changes, so a selection stays on its text while the view scrolls.
"""

from __future__ import annotations

from dataclasses import dataclass

Point = tuple[int, int]  # (running row number, column)

WHEEL_SCROLL_LINES = 3  # tmux scrolls five; three feels closer to a plain terminal

_UP = (b"\x1b[A", b"\x1bOA", b"k", b"\x19")
_DOWN = (b"\x1b[B", b"\x1bOB", b"j", b"\x05")
_PAGE_UP = (b"\x1b[5~", b"\x02")
_PAGE_DOWN = (b"\x1b[6~", b"\x06")
_LEAVE = (b"q", b"\x1b", b"\x03")


@dataclass
class CopyMode:
    offset: int = 0
    anchor: Point | None = None  # where a mouse drag began
    end: Point | None = None     # where it is now
    entered_by_drag: bool = False  # a drag entered it: the copy ends it, as in tmux

    def selection(self) -> tuple[Point, Point] | None:
        """(first, last) selected cell in reading order, both included."""
        if self.anchor is None or self.end is None:
            return None
        return (self.anchor, self.end) if self.anchor <= self.end else (self.end, self.anchor)

    def scroll(self, lines: int, history: int) -> None:
        """Positive `lines` goes back in time; clamped to [0, history]."""
        self.offset = min(max(self.offset + lines, 0), history)

    def key(self, key: bytes, *, history: int, page: int) -> bool:
        """Apply one key; False means leave copy mode."""
        if key in _LEAVE:
            return False
        if key in _UP:
            self.scroll(1, history)
        elif key in _DOWN:
            self.scroll(-1, history)
        elif key in _PAGE_UP:
            self.scroll(max(1, page - 1), history)
        elif key in _PAGE_DOWN:
            self.scroll(-max(1, page - 1), history)
        elif key == b"g":
            self.offset = history
        elif key == b"G":
            self.offset = 0
        return True

    def wheel(self, direction: int, history: int) -> bool:
        """A wheel notch (-1 up, +1 down); False when scrolled down past the bottom: leave."""
        if direction > 0 and self.offset <= 0:
            return False
        self.scroll(-direction * WHEEL_SCROLL_LINES, history)
        return not (direction > 0 and self.offset == 0)


def selected_columns(selection: tuple[Point, Point], row: int, columns: int) -> tuple[int, int] | None:
    """Columns [start, stop) of row number `row` inside the stream `selection` (None: none)."""
    (first_row, first_x), (last_row, last_x) = selection
    if not first_row <= row <= last_row:
        return None
    start = first_x if row == first_row else 0
    stop = min(last_x + 1 if row == last_row else columns, columns)
    return (start, stop) if stop > start else None
