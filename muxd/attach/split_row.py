"""`SplitRow`: a client row of panes side by side, kept as its pieces so a pane row drawn from
the native formatter's text (a `VtRow`) is painted as that text at its column.

compose makes one where a row of the layout holds a VtRow: the pieces are the pane rows (whole:
a VtRow is only given for a pane shown at its full width) and the fixed cells between them
(borders, the dotted area). The painter compares and paints piece by piece; anything else reads
it as the tuple of its cells, made when first asked (a pane-number overlay, a test).
"""

from __future__ import annotations

from muxd.emulator.cell import Cell, CellsRow
from muxd.emulator.vt_row import VtRow

from .frame import FrameRow


class SplitRow(CellsRow):
    """The cells of `pieces` laid side by side from column 0."""

    __slots__ = ("pieces", "_cells")

    def __init__(self, pieces: tuple[FrameRow, ...]) -> None:
        self.pieces = pieces
        self._cells: tuple[Cell, ...] | None = None

    @property
    def cells(self) -> tuple[Cell, ...]:
        cells = self._cells
        if cells is None:
            joined: tuple[Cell, ...] = ()
            for piece in self.pieces:
                joined += piece.cells if isinstance(piece, CellsRow) else piece
            cells = self._cells = joined
        return cells

    def __len__(self) -> int:
        return sum(map(len, self.pieces))

    def __eq__(self, other: object) -> bool:
        if type(other) is SplitRow:
            return len(other.pieces) == len(self.pieces) and all(map(same_piece, self.pieces, other.pieces))
        return self._same_cells(other)

    __hash__ = CellsRow.__hash__  # (a class defining __eq__ loses the inherited one)

    def __repr__(self) -> str:
        return f"SplitRow({self.pieces!r})"


def same_piece(old: FrameRow, new: FrameRow) -> bool:
    """Whether two pieces draw the same cells (VtRows by their text: no cells made)."""
    if old is new:
        return True
    if type(new) is VtRow or type(old) is VtRow:
        return type(old) is type(new) and old.vt == new.vt and len(old) == len(new)  # type: ignore[attr-defined]
    return old == new
