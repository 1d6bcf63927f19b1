"""`Cell`: pyte's `Char` plus the attributes tmux keeps and pyte drops (dim, hidden, overline).

The first nine fields are pyte's, in pyte's order, so pyte's `Screen` methods (which only
use `_replace` and field names) work unchanged on a buffer of Cells.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Tuple


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


class StyledRow(tuple):  # type: ignore[type-arg]
    """A row of cells (a tuple, equal to the plain one) that also knows where its style may
    change: `style_starts`, ascending columns, 0 first; between two of them every cell has one
    style. A reader that knows this for free (the native one) saves the painter from comparing
    the styles of every neighbouring pair of cells. Cells are not to be replaced in it."""

    style_starts: list[int]
    text: str  # the cells' characters joined (once, for every reader of the row)


def styled_row(cells: Iterable[Cell], style_starts: list[int], text: str | None = None) -> StyledRow:
    """`cells` as a StyledRow; `text`: their characters joined, when the caller has them (then
    `cells` may be any iterable, read once)."""
    row = StyledRow(cells)
    row.style_starts = style_starts
    row.text = "".join([cell[0] for cell in row]) if text is None else text
    return row
