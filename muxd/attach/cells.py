"""Laying text out in cells: wide characters take two, zero-width ones join the previous cell."""

from __future__ import annotations

from operator import itemgetter
from typing import Iterable

from muxd.emulator.cell import BLANK, DEFAULT_STYLE, PADDING, Cell, Style
from muxd.emulator.rows import Row
from muxd.emulator.widths import CHAR_WIDTHS

_data = itemgetter(0)


def style_cell(style: Style, char: str = " ") -> Cell:
    """A cell showing `char` with `style` (Cell fields after `data`)."""
    return Cell(char, *style)


def is_wide(cell: Cell) -> bool:
    """True when `cell` holds a character two cells wide."""
    data = cell.data
    return bool(data) and CHAR_WIDTHS[data[0]] == 2


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


def needs_terminal_safety(cells: tuple[Cell, ...]) -> bool:
    """False when every cell is one plain ASCII character (the common case, checked fast)."""
    text = "".join(map(_data, cells))
    return not (len(text) == len(cells) and text.isascii())


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


def terminal_safe(cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """`cells` with every wide character followed by its right half, no stray halves and no
    lone zero-width characters, so a terminal's cursor advances exactly one column per cell.

    (Emulated rows can break this: tmux keeps a wide character in column 0 whose right half
    was overwritten, and ICH/DCH shift cells without regard to wide characters.)"""
    fixed: list[Cell] = []
    count_ = len(cells)
    for index, cell in enumerate(cells):
        data = cell.data
        if data == PADDING:
            previous = fixed[-1].data if fixed else ""
            if not (previous and CHAR_WIDTHS[previous[0]] == 2):
                cell = cell._replace(data=" ")
        elif CHAR_WIDTHS[data[0]] == 2:
            if index + 1 >= count_ or cells[index + 1].data != PADDING:
                cell = cell._replace(data=" ")
        elif CHAR_WIDTHS[data[0]] < 1:
            cell = cell._replace(data=" " + data if CHAR_WIDTHS[data[0]] == 0 else " ")
        fixed.append(cell)
    return tuple(fixed)
