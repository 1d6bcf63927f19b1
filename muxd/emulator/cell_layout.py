"""Laying text out in cells: wide characters take two, zero-width ones join the previous cell.

Here in the emulator, which hands out compact rows as cells (`row_cells`); the attach renderer
lays its status lines and pane rows out with the same functions.
"""

from __future__ import annotations

from typing import Iterable

from .cell import BLANK, DEFAULT_STYLE, PADDING, Cell, Style
from .rows import Row
from .widths import CHAR_WIDTHS


def style_cell(style: Style, char: str = " ") -> Cell:
    """A cell showing `char` with `style` (Cell fields after `data`)."""
    return Cell(char, *style)


def styled_cells(pieces: Iterable[tuple[str, Style]], width: int) -> list[Cell]:
    """Cells for (text, style) pieces, cut at `width` cells (a wide character that would be cut
    becomes a space) and padded with blanks of the last style up to `width`."""
    cells: list[Cell] = []
    style = DEFAULT_STYLE
    for text, style in pieces:
        for char in text:
            char_width = CHAR_WIDTHS[char]
            if char_width == 0:
                if cells and cells[-1].data:
                    last = cells[-1]
                    cells[-1] = last._replace(data=last.data + char)
                continue
            if char_width < 0:
                continue
            room = width - len(cells)
            if room <= 0:
                return cells
            if char_width == 2:
                if room == 1:
                    cells.append(style_cell(style))
                    return cells
                cells.append(style_cell(style, char))
                cells.append(style_cell(style, PADDING))
            else:
                cells.append(style_cell(style, char))
    if len(cells) < width:
        cells.extend([style_cell(style)] * (width - len(cells)))
    return cells


def text_width(text: str) -> int:
    """Cells `text` takes on screen."""
    return sum(max(CHAR_WIDTHS[char], 0) for char in text)


def row_cells(row: Row, width: int) -> tuple[Cell, ...]:
    """A compact `Row` (scrollback, capture) back as exactly `width` cells."""
    if not row.text:
        return (BLANK,) * width
    runs = row.runs or (DEFAULT_STYLE, len(row.text))
    pieces = []
    position = 0
    for index in range(0, len(runs), 2):
        count = runs[index + 1]
        pieces.append((row.text[position : position + count], runs[index]))
        position += count
    cells = styled_cells(pieces, width)
    # Cells past the row's text are blank in the default style, whatever the last run was.
    used = sum(max(CHAR_WIDTHS[char], 0) for char in row.text)
    if used < width:
        cells[used:] = [BLANK] * (width - used)
    return tuple(cells)
