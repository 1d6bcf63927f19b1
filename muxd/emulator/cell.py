"""`Cell`: pyte's `Char` plus the attributes tmux keeps and pyte drops (dim, hidden, overline).

The first nine fields are pyte's, in pyte's order, so pyte's `Screen` methods (which only
use `_replace` and field names) work unchanged on a buffer of Cells.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Iterator, NamedTuple, Tuple


class Cell(NamedTuple):
    """One screen cell: its character(s) and how they look."""

    data: str
    fg: str = "default"
    bg: str = "default"
    bold: bool = False
    italics: bool = False
    underscore: bool = False
    strikethrough: bool = False
    reverse: bool = False
    blink: bool = False
    dim: bool = False
    hidden: bool = False
    overline: bool = False


# A cell's look without its character: Cell[1:].
Style = Tuple[str, str, bool, bool, bool, bool, bool, bool, bool, bool, bool]

BLANK = Cell(" ")
REVERSE_BLANK = Cell(" ", reverse=True)
PADDING = ""  # pyte's data for the second cell of a wide character
DEFAULT_STYLE: Style = BLANK[1:]  # type: ignore[assignment]
STYLE_FIELDS = Cell._fields[1:]


class CellsRow:
    """A row that reads as the tuple of its `cells` (which a subclass may make only when asked):
    iterating, hashing and joining go through them."""

    __slots__ = ()
    cells: tuple[Cell, ...]

    def __iter__(self) -> Iterator[Cell]:
        return iter(self.cells)

    def __hash__(self) -> int:
        return hash(self.cells)

    def __add__(self, other: tuple[Cell, ...]) -> tuple[Cell, ...]:
        return self.cells + tuple(other)

    def __radd__(self, other: tuple[Cell, ...]) -> tuple[Cell, ...]:
        return tuple(other) + self.cells

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self.cells[index]

    def _same_cells(self, other: object) -> bool:
        """`==` against a row of another kind, or a tuple: the same cells (NotImplemented else)."""
        if isinstance(other, tuple) or hasattr(other, "cells"):
            return len(other) == len(self) and self.cells == tuple(other)  # type: ignore[arg-type]
        return NotImplemented


class StyledRow(CellsRow):
    """A row of cells that also knows where its style may change: `style_starts`, ascending
    columns, 0 first; between two of them every cell has one style. A reader that knows this
    for free (the native one) saves the painter from comparing the styles of every
    neighbouring pair of cells.

    It reads as the tuple of its cells (len, index, slice, iterate, ==, +) and equals that
    tuple. A row of plain text (`styles` set: one ASCII character a cell, `styles[i]` the
    style of the run from `style_starts[i]`) makes its cells only when a reader asks for
    them: the painter draws it from `text` and the runs, with no `Cell` made (a full-screen
    TUI restyles every row of every frame)."""

    __slots__ = ("text", "style_starts", "styles", "_cells")

    def __init__(self, text: str, style_starts: list[int], styles: list[Style] | None,
                 cells: tuple[Cell, ...] | None = None) -> None:
        self.text = text  # the cells' characters joined
        self.style_starts = style_starts
        self.styles = styles  # None: not plain text (`cells` given)
        self._cells = cells

    @property
    def cells(self) -> tuple[Cell, ...]:
        cells = self._cells
        if cells is None:
            cells = self._cells = _plain_cells(self.text, self.style_starts, self.styles)  # type: ignore[arg-type]
        return cells

    def style_at(self, x: int) -> Style:
        """The style of cell `x` (0 <= x < len)."""
        styles = self.styles
        if styles is None:
            return self.cells[x][1:]  # type: ignore[return-value]
        return styles[bisect_right(self.style_starts, x) - 1]

    def __len__(self) -> int:
        return len(self.text) if self.styles is not None else len(self.cells)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if type(index) is int and self.styles is not None and self._cells is None:
            text = self.text
            if -len(text) <= index < len(text):  # one cell, without making the row's
                return char_cells(self.style_at(index % len(text)))[text[index]]
        return self.cells[index]

    def __eq__(self, other: object) -> bool:
        if type(other) is StyledRow:
            if self.text != other.text:  # the characters differ: so do the cells
                return False
            if (self.styles is not None and self.styles == other.styles
                    and self.style_starts == other.style_starts):
                return True
            return self.cells == other.cells
        if isinstance(other, tuple):
            return len(other) == len(self) and self.cells == other
        return NotImplemented

    __hash__ = CellsRow.__hash__  # (a class defining __eq__ loses the inherited one)

    def __repr__(self) -> str:
        return f"StyledRow({self.cells!r})"


def styled_row(cells: Iterable[Cell], style_starts: list[int]) -> StyledRow:
    """`cells` (any row) as a StyledRow whose style changes only at `style_starts`."""
    cells = tuple(cells)
    return StyledRow("".join([cell[0] for cell in cells]), style_starts, None, cells)


class _CharCells(dict):  # type: ignore[type-arg]
    """character -> its Cell in one style: the cells of plain rows, made once and shared."""

    __slots__ = ("style",)

    def __init__(self, style: Style) -> None:
        super().__init__()
        self.style = style

    def __missing__(self, char: str) -> Cell:
        cell = self[char] = BLANK if char == " " and self.style == DEFAULT_STYLE else Cell(char, *self.style)
        return cell


# Styles whose character cells are kept; past this many all are dropped (a rainbow of styles
# cannot grow them without bound).
CHAR_CELL_STYLES_MAX = 1024
_char_cells: dict[Style, _CharCells] = {}


def char_cells(style: Style) -> _CharCells:
    """The shared character -> Cell map of `style`."""
    cells = _char_cells.get(style)
    if cells is None:
        if len(_char_cells) >= CHAR_CELL_STYLES_MAX:
            _char_cells.clear()
        cells = _char_cells[style] = _CharCells(style)
    return cells


def _plain_cells(text: str, starts: list[int], styles: list[Style]) -> tuple[Cell, ...]:
    if len(starts) == 1:
        return tuple(map(char_cells(styles[0]).__getitem__, text))
    cells: list[Cell] = []
    for start, stop, style in zip(starts, [*starts[1:], len(text)], styles):
        cells.extend(map(char_cells(style).__getitem__, text[start:stop]))
    return tuple(cells)
