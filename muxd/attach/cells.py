"""Cells a terminal can be sent: wide characters whole, no stray halves or lone zero-width ones.

(Laying text out in cells is the emulator's: muxd/emulator/cell_layout.py.)
"""

from __future__ import annotations

from operator import itemgetter

from muxd.emulator.cell import PADDING, Cell, StyledRow
from muxd.emulator.widths import CHAR_WIDTHS

_data = itemgetter(0)


def is_wide(cell: Cell) -> bool:
    """True when `cell` holds a character two cells wide."""
    data = cell.data
    return bool(data) and CHAR_WIDTHS[data[0]] == 2


def needs_terminal_safety(cells: tuple[Cell, ...]) -> bool:
    """False when every cell is one plain ASCII character (the common case, checked fast)."""
    if type(cells) is StyledRow:
        if cells.styles is not None:  # plain text: one ASCII character a cell
            return False
        text = cells.text
    else:
        text = "".join(map(_data, cells))
    return not (len(text) == len(cells) and text.isascii())


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
