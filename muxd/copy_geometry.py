"""Where copy mode's points are: a point, what copy mode knows of a pane's emulator, and the
columns a selection covers on a row. Shared by the daemon's copy mode (daemon/client_side/),
which moves the cursor and the selection, and the attach renderer (attach/selection.py), which
draws them and copies their text; it sits below both so neither imports the other.

Points are (running row number, column): a row's number (Emulator.rows_scrolled + its
visible row) never changes, so a point stays on its text while the view scrolls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Point = tuple[int, int]  # (running row number, column)
RowsText = Callable[[int, int], list[str]]  # rows first..last, both included, as plain text


@dataclass(frozen=True)
class PaneGeometry:
    """What copy mode needs to know of its pane's emulator, at the moment of a key."""

    top: int      # running number of the live screen's first row (Emulator.rows_scrolled)
    history: int  # rows in the scrollback
    lines: int
    columns: int
    text_of: Callable[[int], str] | None = None  # a row's text, one character per cell (word motions)
    rows_text: RowsText | None = None             # rows as plain text (search)

    @property
    def first(self) -> int:
        return self.top - self.history  # the oldest row kept

    @property
    def last(self) -> int:
        return self.top + self.lines - 1  # the live screen's last row


def selected_columns(selection: tuple[Point, Point], row: int, columns: int) -> tuple[int, int] | None:
    """Columns [start, stop) of row number `row` inside the stream `selection` (None: none)."""
    (first_row, first_x), (last_row, last_x) = selection
    if not first_row <= row <= last_row:
        return None
    start = first_x if row == first_row else 0
    stop = min(last_x + 1 if row == last_row else columns, columns)
    return (start, stop) if stop > start else None
