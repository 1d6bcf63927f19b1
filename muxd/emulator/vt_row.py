"""`VtRow`: a visible row as the escape text that draws it, straight from the native formatter.

A full-screen TUI changes every row of every frame; reading each row's cells and styles into
Python (and a painter writing them back as SGR) was most of what showing it to an attached
client cost. libghostty-vt's formatter writes a row's text and styles in one native call, so a
row it can write faithfully (ghostty_vt_rows.py says which) travels as that text: the painter
writes it whole after a cursor move. It still reads as the tuple of its cells (made from its
text only when a reader asks: a pane-number overlay, a test), as a StyledRow does.
"""

from __future__ import annotations

from .cell import BLANK, Cell, CellsRow
from .cell_layout import row_cells
from .source_block import render_line


class VtRow(CellsRow):
    """A row of `columns` cells drawn by `vt`: SGR sequences (the subset muxd's own styles
    write) and characters one cell wide each, from the default style back to it. `width`
    cells are written; the rest of the row is blank in the default style."""

    __slots__ = ("vt", "width", "columns", "_cells")

    def __init__(self, vt: str, width: int, columns: int) -> None:
        self.vt = vt
        self.width = width
        self.columns = columns
        self._cells: tuple[Cell, ...] | None = None

    @property
    def cells(self) -> tuple[Cell, ...]:
        cells = self._cells
        if cells is None:
            laid_out, _ = render_line(self.vt, BLANK, self.columns, BLANK)
            cells = self._cells = row_cells(laid_out[0], self.columns)
        return cells

    def __len__(self) -> int:
        return self.columns

    def __eq__(self, other: object) -> bool:
        if type(other) is VtRow:
            return self.vt == other.vt and self.columns == other.columns
        return self._same_cells(other)

    __hash__ = CellsRow.__hash__  # (a class defining __eq__ loses the inherited one)

    def __repr__(self) -> str:
        return f"VtRow({self.vt!r}, {self.width}, {self.columns})"
