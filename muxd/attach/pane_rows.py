"""A pane's rows as cells: live rows cached across frames and clients, or a scrolled-back view."""

from __future__ import annotations

import weakref

from muxd.emulator import Emulator
from muxd.emulator.cell import BLANK, StyledRow
from muxd.emulator.cell_layout import row_cells

from .cells import needs_terminal_safety, terminal_safe
from .frame import FrameRow


class _LiveRows:
    """The emulator's visible rows as cell tuples, re-read only where the screen changed."""

    __slots__ = ("version", "size", "rows")

    def __init__(self) -> None:
        self.version = -1
        self.size = (0, 0)
        self.rows: list[FrameRow] = []

    def refresh(self, emulator: Emulator) -> list[FrameRow]:
        size = (emulator.columns, emulator.lines)
        since = self.version
        if size != self.size:
            self.size = size
            self.rows = [()] * size[1]
            since = -1
        self.version, changed = emulator.changed_rows(since)
        rows = self.rows
        for y, row in zip(changed, emulator.rows_cells(changed)):
            # (A plain StyledRow is safe as it is: tested here, the test of a TUI's every row.)
            if (type(row) is not StyledRow or row.styles is None) and needs_terminal_safety(row):  # type: ignore[attr-defined]
                row = terminal_safe(row)
            # A row rewritten with the same cells (TUIs redraw whole screens) keeps its old
            # tuple, so compose and the painters see it unchanged by identity alone.
            if row != rows[y]:
                rows[y] = row
        return rows


# One cache per emulator, shared by every client showing it; it goes with the emulator.
_live: weakref.WeakKeyDictionary[Emulator, _LiveRows] = weakref.WeakKeyDictionary()


def live_rows(emulator: Emulator) -> list[FrameRow]:
    """The visible rows, each exactly `emulator.columns` cells; unchanged rows are the same
    tuple objects as last time (so a frame can tell them apart by identity)."""
    cache = _live.get(emulator)
    if cache is None:
        cache = _live[emulator] = _LiveRows()
    return cache.refresh(emulator)


def scrolled_rows(emulator: Emulator, offset: int) -> list[FrameRow]:
    """The view `offset` rows back into the scrollback (copy mode), as cells.

    `offset` is clamped to the history size."""
    offset = min(max(offset, 0), emulator.history_size)
    if offset == 0:
        return live_rows(emulator)
    columns, lines = emulator.columns, emulator.lines
    rows = [row_cells(row, columns) for row in emulator.rows(-offset, lines - 1 - offset)]
    rows.extend([(BLANK,) * columns] * (lines - len(rows)))
    return rows
