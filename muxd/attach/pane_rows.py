"""A pane's rows as cells: live rows cached across frames and clients, or a scrolled-back view."""

from __future__ import annotations

import weakref

from muxd.emulator import Emulator
from muxd.emulator.cell import BLANK, StyledRow
from muxd.emulator.cell_layout import row_cells
from muxd.emulator.vt_row import VtRow

from .cells import needs_terminal_safety, terminal_safe
from .frame import FrameRow


class _LiveRows:
    """The emulator's visible rows as cell tuples (or, `vt`, as the native formatter's text
    where it can write them: emulator/vt_row.py), re-read only where the screen changed."""

    __slots__ = ("version", "size", "rows", "vt")

    def __init__(self, vt: bool = False) -> None:
        self.version = -1
        self.size = (0, 0)
        self.rows: list[FrameRow] = []
        self.vt = vt

    def refresh(self, emulator: Emulator) -> list[FrameRow]:
        size = (emulator.columns, emulator.lines)
        since = self.version
        if size != self.size:
            self.size = size
            self.rows = [()] * size[1]
            since = -1
        self.version, changed = emulator.changed_rows(since)
        if not changed:
            return self.rows
        rows = self.rows
        if self.vt:
            drawn = emulator.vt_rows(changed)
            if drawn is not None:
                changed = self._keep_vt_rows(changed, drawn)
        for y, row in zip(changed, emulator.rows_cells(changed) if changed else ()):
            # (A plain StyledRow is safe as it is: tested here, the test of a TUI's every row.)
            if (type(row) is not StyledRow or row.styles is None) and needs_terminal_safety(row):  # type: ignore[attr-defined]
                row = terminal_safe(row)
            # A row rewritten with the same cells (TUIs redraw whole screens) keeps its old
            # tuple, so compose and the painters see it unchanged by identity alone.
            old = rows[y]
            if type(old) is VtRow or row != old:  # (a VtRow would make its cells to compare)
                rows[y] = row
        return rows

    def _keep_vt_rows(self, changed: list[int], drawn: list[VtRow | None]) -> list[int]:
        """Keep the rows `drawn` as text (an equal one keeps its old object); the rows left
        to read as cells."""
        rows = self.rows
        for y, row in zip(changed, drawn):
            if row is not None:
                old = rows[y]
                if type(old) is not VtRow or old.vt != row.vt:  # type: ignore[union-attr]
                    rows[y] = row  # type: ignore[assignment]
        return [y for y, row in zip(changed, drawn) if row is None]


# One cache per emulator, shared by every client showing it; it goes with the emulator.
_live: weakref.WeakKeyDictionary[Emulator, _LiveRows] = weakref.WeakKeyDictionary()
_live_vt: weakref.WeakKeyDictionary[Emulator, _LiveRows] = weakref.WeakKeyDictionary()


def live_rows(emulator: Emulator, *, vt: bool = False) -> list[FrameRow]:
    """The visible rows, each exactly `emulator.columns` cells; unchanged rows are the same
    tuple objects as last time (so a frame can tell them apart by identity). `vt`: rows the
    native formatter can write come as `VtRow`s, for a painter that draws them whole at
    column 0 of a client as wide as the pane (a pane filling the client's window)."""
    caches = _live_vt if vt else _live
    cache = caches.get(emulator)
    if cache is None:
        cache = caches[emulator] = _LiveRows(vt)
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
