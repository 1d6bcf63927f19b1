"""Finding text in copy mode (tmux's vi `/`, `?`, `n`, `N`).

Over the history and the screen, from the cursor on, wrapping around at either end as tmux
does. A needle in lower case matches any case (tmux's smart case). Pure: rows come from
`rows_text(first, last)`, plain text by running row number; matches are placed on cell
columns (a wide character takes two).
"""

from __future__ import annotations

from collections.abc import Iterator

from muxd.copy_geometry import Point, RowsText
from muxd.emulator.widths import CHAR_WIDTHS

SEARCH_CHUNK_ROWS = 500  # rows read at a time, nearest the cursor first


def find(rows_text: RowsText, needle: str, start: Point, *, forward: bool, first: int,
         last: int) -> Point | None:
    """The match of `needle` nearest after (`forward`) or before `start`, wrapping around the
    rows first..last; None when there is none."""
    if not needle:
        return None
    fold = needle == needle.lower()
    row, column = start
    if forward:  # the rest of the start row, the rows below, from the top, the start of the start row
        passes = [(row, last, lambda found: found > column), (first, row, lambda found: found <= column)]
    else:
        passes = [(first, row, lambda found: found < column), (row, last, lambda found: found >= column)]
    for low, high, on_start_row in passes:
        for number, text in _rows(rows_text, low, high, forward):
            columns = _match_columns(text, needle, fold)
            if number == row:
                columns = [found for found in columns if on_start_row(found)]
            if columns:
                return number, (columns[0] if forward else columns[-1])
    return None


def _rows(rows_text: RowsText, low: int, high: int, forward: bool) -> Iterator[tuple[int, str]]:
    """(row number, text) of rows low..high, in search order, read a chunk at a time."""
    if forward:
        for chunk in range(low, high + 1, SEARCH_CHUNK_ROWS):
            end = min(high, chunk + SEARCH_CHUNK_ROWS - 1)
            yield from zip(range(chunk, end + 1), rows_text(chunk, end))
    else:
        for chunk in range(high, low - 1, -SEARCH_CHUNK_ROWS):
            begin = max(low, chunk - SEARCH_CHUNK_ROWS + 1)
            texts = rows_text(begin, chunk)
            yield from zip(range(chunk, begin - 1, -1), reversed(texts))


def _match_columns(text: str, needle: str, fold: bool) -> list[int]:
    """Cell columns where `needle` starts in `text`, left to right."""
    if fold:
        lowered = text.lower()
        if len(lowered) == len(text):  # lower() can lengthen a few characters: then match as is
            text = lowered
    found: list[int] = []
    index = text.find(needle)
    while index >= 0:
        found.append(sum(max(CHAR_WIDTHS[char], 0) for char in text[:index]))
        index = text.find(needle, index + 1)
    return found
