"""Visible rows of a libghostty-vt terminal as `VtRow`s: one formatter call for all of them.

The formatter's VT text draws a row as its cells are, except where checked here, row by row:
- its SGR is made muxd's (ghostty_history.muxd_sgr: named colours 0-15, one underline, no
  underline colour), and a row with any other sequence is not drawn from it;
- every character must be printable and one cell wide (no C0/C1 control, no wide or
  zero-width character: the client's terminal would place those its own way; the cell reader
  makes such rows safe, terminal_safe in attach/cells.py);
- the formatter writes a cell never written, between written ones, as a space in the style
  before it (tmux and muxd's cells have it blank in the default style), and leaves out a row's
  trailing background-coloured blanks: the row's raw cells (NativeRowCells.vt_drawable) must
  have no unwritten cell in the text, and only default blanks after it.
A row that fails is None: its reader draws it from its cells.
"""

from __future__ import annotations

import re

from .ghostty_format import ACTIVE, NativeFormatter
from .ghostty_history import muxd_sgr
from .ghostty_rows import NativeRowCells
from .vt_row import VtRow
from .widths import CHAR_WIDTHS

_UNDERLINE_COLOUR = re.compile(r"\x1b\[5[89](?:;[0-9;]*)?m")  # muxd's cells keep none
# Every SGR muxd's own painter writes (sgr.sgr_transition): once these are taken out of a row,
# an escape left over is one the client must not be sent.
_KNOWN_SGR = re.compile(r"\x1b\[(?:[34]8;(?:5;\d{1,3}|2;\d{1,3};\d{1,3};\d{1,3})|[0-57-9]|53|[349][0-7]|10[0-7])?m")
_RESET = "\x1b[0m"
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))  # deleted from ASCII rows, the line breaks alone must be left


def vt_rows(formatter: NativeFormatter, reader: NativeRowCells, ys: list[int], columns: int) -> list[VtRow | None]:
    """Rows `ys` (ascending, visible) as VtRows, None where one cannot be drawn from the
    formatter's text (see the module docstring). `reader`'s render state is up to date."""
    text = formatter.format(ACTIVE, ys[0], ys[-1], columns, vt=True, unwrap=False)
    styled = "\x1b" in text
    if styled:  # (any other escape stays in the characters below: its row is not drawable)
        text = muxd_sgr(_UNDERLINE_COLOUR.sub("", text) if "\x1b[5" in text else text)
    lines = text.split("\r\n") if text else []
    chars = _KNOWN_SGR.sub("", text) if styled else text
    shown = chars.split("\r\n") if chars else []
    first = ys[0]
    if len(lines) == len(ys) == ys[-1] - first + 1:
        texts = list(zip(lines, shown))  # the rows are one block, all written (a TUI's redraw)
    else:
        texts = [(lines[y - first], shown[y - first]) if y - first < len(lines) else ("", "") for y in ys]
    # (Most screens' text is all printable ASCII: then no row needs a look of its own.)
    if not (chars.isascii() and len(chars.encode().translate(None, _PRINTABLE_ASCII)) == 2 * len(shown) - 2):
        texts = [text if _narrow(text[1]) else None for text in texts]  # type: ignore[misc]
    widths = [len(text[1]) if text is not None else columns + 1 for text in texts]
    return [VtRow(text[0] if text[0].endswith(_RESET) else _ending_in_default(text[0]), width, columns)  # type: ignore[index]
            if drawable else None for text, width, drawable in zip(texts, widths, reader.vt_drawable(ys, widths, columns))]


def _ending_in_default(line: str) -> str:
    """`line` ending in the default style (the formatter ends a styled row so; it is checked)."""
    return line if line.rfind("\x1b[") == line.rfind(_RESET) else line + _RESET


def _narrow(chars: str) -> bool:
    """Whether every character of `chars` is printable and one cell wide; an escape muxd's
    SGR did not account for is neither."""
    return chars.isprintable() and all(CHAR_WIDTHS[char] == 1 for char in set(chars))
