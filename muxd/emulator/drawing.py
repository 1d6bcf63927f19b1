"""Putting printable text on the screen: a per-character reference and a per-run fast path.

Both give the same cells. Compared with pyte's `Screen.draw` they follow tmux where pyte is
wrong for basic cases: a wide character that does not fit at the end of a row wraps first
(without autowrap it is dropped); overwriting half of a wide character blanks the other
half (except, as in tmux, a wide character in column 0 whose right half is overwritten);
zero-width characters (combining marks, ZWJ, variation selectors) are appended to the
previous character, not normalised (tmux keeps "e" + U+0301 as typed), instead of ending
the whole run; control characters are skipped. While a DEC graphics set is in use, text
is drawn as its line-drawing glyphs (charsets.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Protocol

from pyte import modes
from pyte.screens import Cursor

from .cell import BLANK, PADDING, Cell
from .widths import CHAR_WIDTHS

# Flyweight caches: styles with a cache, before the oldest set is dropped.
CHAR_CACHE_MAX_STYLES = 256


class CharCache(dict[str, Cell]):
    """Character -> the one `Cell` with these attributes (a flyweight per style)."""

    def __init__(self, attrs: Cell) -> None:
        super().__init__()
        self.attrs = attrs

    def __missing__(self, char: str) -> Cell:
        cell = self.attrs._replace(data=char)
        self[char] = cell
        return cell


class DrawTarget(Protocol):
    """What drawing reads and writes of a screen (screen.MuxScreen, which imports this module),
    all of it used directly: drawing is on the hot output path."""

    buffer: defaultdict[int, Any]  # row number -> screen.ScreenLine (column -> Cell, .wrapped)
    cursor: Cursor
    columns: int
    mode: set[int]
    dirty: set[int]
    translation: dict[int, str] | None  # charsets.CharsetShifts: None while ASCII is in use
    last_char: str

    def index(self) -> None: ...

    def insert_characters(self, count: int | None = None) -> None: ...

    def char_cache(self, attrs: Cell) -> CharCache: ...


def wrap_line(screen: DrawTarget) -> None:
    """Autowrap: mark the cursor's row as soft-wrapped and move to the start of the next."""
    screen.buffer[screen.cursor.y].wrapped = True
    screen.cursor.x = 0
    screen.index()


def _fix_wide_neighbours(line: dict[int, Cell], x: int, width: int) -> None:
    """Blank the other half of any wide character that writing cells [x, x+width) splits."""
    cell = line.get(x)
    if cell is not None and cell.data == PADDING and x > 1:
        line[x - 1] = BLANK
    cell = line.get(x + width)
    if cell is not None and cell.data == PADDING:
        line[x + width] = BLANK


def _combine(screen: DrawTarget, char: str) -> None:
    """Append a zero-width character to the character before the cursor."""
    x = screen.cursor.x
    if x == 0:
        return  # nothing to combine with on this row
    line = screen.buffer[screen.cursor.y]
    target = x - 1
    if line[target].data == PADDING and target > 0:
        target -= 1
    last = line[target]
    line[target] = last._replace(data=last.data + char)
    screen.dirty.add(screen.cursor.y)


def draw_reference(screen: DrawTarget, data: str) -> None:
    """Draw `data` one character at a time (the plain emulation the fast path must match)."""
    if screen.translation is not None:  # a DEC graphics set is in use (charsets.py)
        data = data.translate(screen.translation)
    _draw_each(screen, data)


def _draw_each(screen: DrawTarget, data: str) -> None:
    cursor = screen.cursor
    for char in data:
        width = CHAR_WIDTHS[char]
        if width < 0:
            continue
        if width == 0:
            _combine(screen, char)
            continue
        columns = screen.columns
        autowrap = modes.DECAWM in screen.mode
        if cursor.x >= columns:
            if autowrap:
                wrap_line(screen)
            elif width > 1:
                continue  # tmux drops a wide character that cannot fit
            else:
                cursor.x = columns - 1
        if cursor.x + width > columns:  # a wide character in the last column
            if width > columns or not autowrap:
                continue
            wrap_line(screen)
        if modes.IRM in screen.mode:
            screen.insert_characters(width)
        line = screen.buffer[cursor.y]
        x = cursor.x
        _fix_wide_neighbours(line, x, width)
        line[x] = cursor.attrs._replace(data=char)
        if width == 2:
            line[x + 1] = cursor.attrs._replace(data=PADDING)
        cursor.x = x + width
        screen.dirty.add(cursor.y)
        screen.last_char = char


def draw_fast(screen: DrawTarget, data: str) -> None:
    """Draw `data` in whole runs: one dict update per row and one shared `Cell` per character."""
    if screen.translation is not None:
        data = data.translate(screen.translation)
    mode = screen.mode
    if modes.IRM in mode or modes.DECAWM not in mode:
        _draw_each(screen, data)
        return
    if data.isascii() and data.isprintable():
        _draw_narrow(screen, data)
        return
    widths = list(map(CHAR_WIDTHS.__getitem__, data))
    if widths.count(1) == len(widths):
        _draw_narrow(screen, data)
        return
    # Mixed: narrow stretches in bulk, anything else one character at a time.
    start = 0
    end = len(data)
    while start < end:
        stop = start
        while stop < end and widths[stop] == 1:
            stop += 1
        if stop > start:
            _draw_narrow(screen, data[start:stop])
        if stop < end:
            _draw_each(screen, data[stop])
        start = stop + 1


def _draw_narrow(screen: DrawTarget, data: str) -> None:
    """Draw characters that are all one cell wide, with autowrap on and insert mode off."""
    if not data:
        return
    screen.last_char = data[-1]
    cursor = screen.cursor
    columns = screen.columns
    buffer = screen.buffer
    get_cell = screen.char_cache(cursor.attrs).__getitem__
    while data:
        if cursor.x >= columns:
            wrap_line(screen)
        x = cursor.x
        room = columns - x
        if len(data) <= room:
            chunk, data = data, ""
        else:
            chunk, data = data[:room], data[room:]
        width = len(chunk)
        line = buffer[cursor.y]
        _fix_wide_neighbours(line, x, width)
        if width == 1:
            line[x] = get_cell(chunk)
        else:
            line.update(zip(range(x, x + width), map(get_cell, chunk)))
        cursor.x = x + width
        screen.dirty.add(cursor.y)
