"""`Frame`: one client screen's worth of styled cells, plus the cursor and terminal modes."""

from __future__ import annotations

from dataclasses import dataclass

from muxd.emulator.cell import Cell

# A frame row is exactly `columns` cells. A wide character's right half is a cell whose data
# is "" right after it; nothing else has empty data. A row read from the native emulator is a
# StyledRow, which reads as (and equals) the tuple of its cells but may not have made them.
FrameRow = tuple[Cell, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Frame:
    """What one attached client should see, as produced by `compose`."""

    columns: int
    lines: int
    rows: tuple[FrameRow, ...]
    cursor: tuple[int, int]  # (x, y) on the client screen, 0-based
    cursor_visible: bool
    # DEC private modes of the active pane (e.g. 1 = DECCKM, 66 = application keypad,
    # 1000/1002/1003/1006 = mouse, 2004 = bracketed paste); the painter mirrors some of them.
    modes: frozenset[int] = frozenset()

    def text_rows(self) -> list[str]:
        """Each row's characters (wide characters once), trailing spaces kept: for tests and logs."""
        return ["".join(cell.data for cell in row) for row in self.rows]
