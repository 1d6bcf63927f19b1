"""How a flood line lays out into rows, exactly as emulating it from a fresh row would.

A flood line (printable text and SGR, see flood.py) of one-cell characters without tabs
takes ceil(cells / columns) rows, all full but the last; source_block.py handles that case
for whole blocks at once with C-speed string calls. This module handles the other lines,
one at a time:

- tabs, with the default stops (every TAB_WIDTH columns): HT writes no cell and never wraps
  (cursor_rules.py). Only a written character at a pending wrap starts a new row, so rows
  are still full but the last and a line is still described by one *width*:
  (rows - 1) * columns + the last row's text length (gaps before a written cell are blank
  cells in the row text, a trailing tab adds nothing);
- wide characters (wrapping early when they do not fit at the end of a row, their padding
  cell without text) and zero-width ones (appended to the previous cell's text): rows are
  no longer full, so such a line is described by its rows' text sizes.

Text sizes are UTF-8 bytes, the unit of the scrollback cap, so a line of non-ASCII text
spanning several rows is described by its rows' text sizes too.

Widths come from widths.CHAR_WIDTHS, the table the emulator draws with, and per-character
layout mirrors drawing.draw_reference (tests/test_emulator_identity.py proves the result).
"""

from __future__ import annotations

import functools
import re
from itertools import compress, count, repeat
from operator import add, gt, sub
from typing import Callable, Iterable, NamedTuple

from .cell import BLANK, PADDING, Cell
from .tab_stops import TAB_WIDTH
from .csi_params import parse_csi_params
from .rows import Row, row_from_cells, text_bytes
from .sgr import apply_sgr
from .widths import CHAR_WIDTHS, char_width

SGR_SEQUENCE = re.compile(r"\x1b\[([0-9;]*)m")
WHOLE_SGR = re.compile(r"\x1b\[[0-9;]*m")
# strip_sgr looks for the kinds of SGR sequence in this much of the text, and replaces at most
# this many kinds by plain string replacing: a flood's colours repeat (grep's two, a log's levels).
SGR_SAMPLE_CHARS = 512
_SGR_KINDS_MAX = 8
LINE_END = "\r\n"
# Past the BMP every character is laid out one by one (exact whatever its width; emoji
# are mostly wide anyway), which keeps the table below to a 65k-character scan.
_FIRST_ASTRAL = 0x10000


def strip_sgr(text: str) -> str:
    """Flood text (printable text and SGR sequences: every ESC begins one) without its SGR
    sequences: SGR_SEQUENCE.sub("", text), at C speed for the kinds of sequence seen first.
    Replacing a kind removes only whole sequences of the text: one begins at each ESC and
    holds no other, so the piece of text a kind's copy spans was that sequence already."""
    kinds = set(WHOLE_SGR.findall(text, 0, SGR_SAMPLE_CHARS))
    if len(kinds) <= _SGR_KINDS_MAX:
        for kind in kinds:
            text = text.replace(kind, "")
        if "\x1b" not in text:
            return text
    return SGR_SEQUENCE.sub("", text)


class _RowCells(dict[int, Cell]):
    """Column -> cell of a row being laid out; a column never written reads as `default`
    as in pyte's StaticDefaultDict (rows.row_from_cells reads both)."""

    def __init__(self, default: Cell) -> None:
        self.default = default

    def __missing__(self, column: int) -> Cell:
        return self.default


# The BMP scanned in blocks this many characters long, one block per warm-up step (table_steps).
_BLOCK_CHARS = 0x1000


@functools.cache
def _odd_ranges(block: int) -> tuple[tuple[int, int], ...]:
    """Runs (first, last) of the characters of BMP block `block` (from U+00A0) that are not
    exactly one cell wide."""
    ranges: list[tuple[int, int]] = []
    for code in range(max(0xA0, block * _BLOCK_CHARS), min((block + 1) * _BLOCK_CHARS, _FIRST_ASTRAL)):
        if char_width(chr(code)) != 1:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return tuple(ranges)


@functools.cache
def _odd_char_class() -> str:
    """Regex class body of the non-ASCII characters that are not exactly one cell wide."""
    ranges: list[tuple[int, int]] = []
    for block in range(_FIRST_ASTRAL // _BLOCK_CHARS):
        for first, last in _odd_ranges(block):
            if ranges and ranges[-1][1] == first - 1:  # a run across a block's end
                ranges[-1] = (ranges[-1][0], last)
            else:
                ranges.append((first, last))
    ranges.append((_FIRST_ASTRAL, 0x10FFFF))
    return "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in ranges)


@functools.cache
def _odd_char() -> re.Pattern[str]:
    """Matches a character that needs per-character layout (built on first use, ~70 ms)."""
    return re.compile(f"[{_odd_char_class()}]")


@functools.cache
def _tab_or_odd_char() -> re.Pattern[str]:
    return re.compile(f"[\t{_odd_char_class()}]")


@functools.cache
def _tab_or_odd_char_group() -> re.Pattern[str]:
    return re.compile(f"([\t{_odd_char_class()}])")


def table_steps() -> list[Callable[[], object]]:
    """Building the tables above in steps of a few ms each (the BMP's widths block by block,
    then each regex), for a daemon that has just started to take between its requests."""
    blocks = [functools.partial(_odd_ranges, block) for block in range(_FIRST_ASTRAL // _BLOCK_CHARS)]
    return [*blocks, _odd_char, _tab_or_odd_char, _tab_or_odd_char_group]


def build_tables() -> None:
    """Build the tables above now (~20 ms), e.g. while a daemon that just started is idle,
    rather than in the middle of the first output that needs them."""
    for step in table_steps():
        step()


def rows_for_width(width: int, columns: int) -> int:
    """Rows a line of `width` (see the module docstring) takes (an empty line takes one)."""
    return (width - 1) // columns + 1 if width else 1


def next_tab_column(x: int, columns: int) -> int:
    """Where HT moves the cursor from column `x` with the default tab stops."""
    last = columns - 1
    return x if x >= last else min((x // TAB_WIDTH + 1) * TAB_WIDTH, last)


def narrow_line_width(plain: str, columns: int) -> int:
    """Width of a line of one-cell characters and tabs (SGR removed)."""
    body = plain.lstrip("\t")
    if "\t" not in body:  # indentation only (the common case): no tab after a written cell
        if not body:
            return 0
        # Tabs from column 0 stop every TAB_WIDTH up to the last column; after that each
        # character adds one cell, rows being full but the last.
        return min((len(plain) - len(body)) * TAB_WIDTH, columns - 1) + len(body)
    x = full_rows = last_row_length = 0
    for index, segment in enumerate(plain.split("\t")):
        if index:
            x = next_tab_column(x, columns)
        size = len(segment)
        if not size:
            continue
        room = columns - x  # 0 at a pending wrap
        if size <= room:
            x += size
        else:
            beyond = size - room
            wraps = (beyond - 1) // columns + 1
            full_rows += wraps
            x = beyond - (wraps - 1) * columns
        last_row_length = x
    return full_rows * columns + last_row_length


def row_text_bytes(plain: str, columns: int) -> list[int]:
    """UTF-8 sizes of the texts of the rows a flood line (SGR removed) takes: `lay_out_line`
    without cells.

    Relies on the cursor only moving forward on a fresh row, so a character never lands on
    a written cell (and no wide character is ever split)."""
    sizes: list[int] = []
    x = end = size = 0  # `end`: cells up to the last written one; `size`: their text's bytes
    # split() with a group alternates runs of one-cell characters and single odd ones.
    for index, part in enumerate(_tab_or_odd_char_group().split(plain)):
        if not index % 2:  # one-cell characters, a row at a time
            cells = len(part)
            room = columns - x
            if cells <= room:
                if cells:
                    size += x - end + text_bytes(part)
                    x = end = x + cells
                continue
            if room:
                size += x - end + text_bytes(part[:room])
            sizes.append(size)
            beyond = cells - room
            wraps = (beyond - 1) // columns + 1
            last = room + (wraps - 1) * columns  # where the last row's characters start
            if part.isascii():
                sizes.extend([columns] * (wraps - 1))
            else:
                sizes.extend(text_bytes(part[row : row + columns]) for row in range(room, last, columns))
            x = end = cells - last
            size = text_bytes(part[last:])
            continue
        if part == "\t":
            x = next_tab_column(x, columns)
            continue
        width = CHAR_WIDTHS[part]
        if width <= 0:
            if width == 0 and x:  # appended to the cell before the cursor, blank or not
                if x > end:
                    size += x - end  # the blanks before it, the last one taking the mark
                    end = x
                size += text_bytes(part)
            continue
        if x >= columns or x + width > columns:
            if width > columns:  # never fits (drawn nowhere, after wrapping a pending row)
                if x >= columns:
                    sizes.append(size)
                    x = end = size = 0
                continue
            sizes.append(size)
            x = end = size = 0
        size += x - end + text_bytes(part)  # a wide character's padding cell has no text
        x = end = x + width
    sizes.append(size)
    return sizes


def lay_out_line(line: str, attrs: Cell, columns: int, default: Cell) -> tuple[list[Row], Cell]:
    """Rows that emulating `line` + CRLF produces from a fresh row, and the attributes after.

    One character at a time, as drawing.draw_reference does with autowrap on and insert mode
    off, plus HT with the default tab stops."""
    rows: list[Row] = []
    cells: dict[int, Cell] = _RowCells(default)
    x = 0
    # SGR_SEQUENCE.split alternates visible text and SGR parameters: [text, params, ..., text].
    for index, part in enumerate(SGR_SEQUENCE.split(line)):
        if index % 2:
            attrs = apply_sgr(attrs, parse_csi_params(part), default)
            continue
        for char in part:
            if char == "\t":
                x = next_tab_column(x, columns)
                continue
            width = CHAR_WIDTHS[char]
            if width <= 0:
                if width == 0 and x:  # combines with the character before (drawing._combine)
                    target = x - 1
                    if cells[target].data == PADDING and target > 0:
                        target -= 1
                    previous = cells[target]
                    cells[target] = previous._replace(data=previous.data + char)
                continue
            if x >= columns:
                rows.append(row_from_cells(cells, columns, True))
                cells, x = _RowCells(default), 0
            if x + width > columns:  # a wide character that does not fit wraps first
                if width > columns:
                    continue
                rows.append(row_from_cells(cells, columns, True))
                cells, x = _RowCells(default), 0
            _split_wide_neighbours(cells, x, width)
            cells[x] = attrs._replace(data=char)
            if width == 2:
                cells[x + 1] = attrs._replace(data=PADDING)
            x += width
    rows.append(row_from_cells(cells, columns, False))
    return rows, attrs


def _split_wide_neighbours(cells: dict[int, Cell], x: int, width: int) -> None:
    """drawing._fix_wide_neighbours on a row being laid out."""
    cell = cells.get(x)
    if cell is not None and cell.data == PADDING and x > 1:
        cells[x - 1] = BLANK
    cell = cells.get(x + width)
    if cell is not None and cell.data == PADDING:
        cells[x + width] = BLANK


def needs_layout(line: str) -> bool:
    """True if `line` has a tab or a character that is not one cell wide."""
    if line.isascii():
        return "\t" in line
    return _tab_or_odd_char().search(line) is not None


def is_narrow(line: str) -> bool:
    """True if every character of `line` (tabs aside) is one cell wide."""
    return line.isascii() or _odd_char().search(line) is None


def line_rows(plain: str, columns: int) -> int:
    """Rows a flood line (SGR removed) takes."""
    if not needs_layout(plain):
        return rows_for_width(len(plain), columns)
    if is_narrow(plain):
        return rows_for_width(narrow_line_width(plain, columns), columns)
    return len(row_text_bytes(plain, columns))


class BlockGeometry(NamedTuple):
    """Sizes of the CRLF-terminated lines of a flood block, without rendering them."""

    widths: list[int]  # per line: its width (see the module docstring); unused if irregular
    # Line index -> its rows' text sizes, for lines whose rows are not all full but the last
    # or whose text is not ASCII (there bytes are not cells): wide, zero-width, UTF-8 text.
    irregular: dict[int, tuple[int, ...]]
    text_sizes: list[int]  # per line: the UTF-8 bytes of its rows' texts together

    def row_counts(self, columns: int) -> list[int]:
        # rows_for_width for every line, a Python step only for lines wider than a row.
        rows = [1] * len(self.widths)
        for index in compress(count(), map(gt, self.widths, repeat(columns))):
            rows[index] = (self.widths[index] - 1) // columns + 1
        for index, sizes in self.irregular.items():
            rows[index] = len(sizes)
        return rows


def split_lines(text: str) -> list[str]:
    """The CRLF-terminated lines of `text`, without their CRLF."""
    lines = text.split(LINE_END)
    lines.pop()  # the empty string after the last CRLF
    return lines


def block_geometry(text: str, has_sgr: bool, columns: int, lines: list[str] | None = None) -> BlockGeometry:
    """Widths and text sizes of the lines of `text` (`lines`: split_lines(text), if the caller
    has it); per-line Python work only for lines that need layout or span rows in UTF-8."""
    if has_sgr:
        text = strip_sgr(text)
        lines = None
    if lines is None:
        lines = split_lines(text)
    widths = list(map(len, lines))
    irregular: dict[int, tuple[int, ...]] = {}
    ascii_only = text.isascii()
    if ascii_only and "\t" not in text:
        return BlockGeometry(widths, irregular, widths)
    # Which lines need layout, found without a Python step per line.
    if ascii_only:
        flags: Iterable[object] = map(str.__contains__, lines, repeat("\t"))
    else:
        flags = map(_tab_or_odd_char().search, lines)
    odd = None if ascii_only else _odd_char().search
    for index in compress(count(), flags):
        line = lines[index]
        if odd is None or odd(line) is None:
            widths[index] = narrow_line_width(line, columns)
        else:
            irregular[index] = tuple(row_text_bytes(line, columns))
    if ascii_only:
        return BlockGeometry(widths, irregular, widths)
    # A one-cell character is one cell of width and its UTF-8 length of text (tabs leave
    # one-byte blanks, counted in the width).
    extra_bytes = map(sub, map(len, map(_utf8, lines)), map(len, lines))
    text_sizes = list(map(add, widths, extra_bytes))
    for index in compress(count(), map(gt, widths, repeat(columns))):
        if text_sizes[index] != widths[index] and index not in irregular:  # UTF-8 over several rows
            irregular[index] = tuple(row_text_bytes(lines[index], columns))
    for index, sizes in irregular.items():
        text_sizes[index] = sum(sizes)
    return BlockGeometry(widths, irregular, text_sizes)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def last_drawn_char(text: str) -> str:
    """The last character emulating the flood lines `text` draws ("" if none), for REP."""
    position = len(text)
    while position > 0:
        line_start = text.rfind("\n", 0, position - 1) + 1
        line = text[line_start:position]
        if "\x1b" in line:
            line = SGR_SEQUENCE.sub("", line)
        for char in reversed(line):
            if char not in "\r\n\t" and CHAR_WIDTHS[char] > 0:
                return char
        position = line_start
    return ""
