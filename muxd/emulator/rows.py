"""Compact rows: a screen row as its text plus style runs, the unit of scrollback and capture.

A pyte row is a dict of ~80 `Cell` namedtuples (~5 KB); a `Row` is one str, one flat tuple of
runs referring to shared `Style` objects, and a flag (~150–250 bytes for 80 columns). The
scrollback packs rows tighter still (packed_rows.py, source_block.py); `row_size_bytes` is
what a row costs there, the unit of the scrollback cap.
"""

from __future__ import annotations

from itertools import groupby, repeat
from operator import getitem, itemgetter
from typing import Mapping, NamedTuple

from .cell import BLANK, DEFAULT_STYLE, Cell, Style
from .sgr import intern_style

# Flat (style, char_count, style, char_count, ...): counts are in characters of `text`
# (a wide character's padding cell has no characters, a combined cell may have several).
# Empty when every character has DEFAULT_STYLE.
StyleRuns = tuple


class Row(NamedTuple):
    """One screen row: `text` is the cells' characters up to the last written cell."""

    text: str
    runs: StyleRuns
    wrapped: bool  # the row soft-wrapped into the next one (tmux's GRID_LINE_WRAPPED)

    @property
    def size_bytes(self) -> int:
        """The row's cost against the scrollback cap (see row_size_bytes)."""
        return row_size_bytes(text_bytes(self.text))


EMPTY_ROW = Row("", (), False)
EMPTY_WRAPPED_ROW = Row("", (), True)

_cell_text = itemgetter(0)
# cell[1:] (a plain tuple): ~4x faster than itemgetter(1, ..., 11) on these namedtuples.
_STYLE_FIELDS = slice(1, len(Cell._fields))


# What a scrollback row holds besides its text, at most, in bytes: a packed row's offsets,
# wrap flag and two style runs (packed_rows.py: 9 bytes + 8 a run), or a source line's
# offsets, CRLF and ~18 bytes of SGR sequences (source_block.py: 14 bytes + its SGR).
ROW_OVERHEAD_BYTES = 32


def text_bytes(text: str) -> int:
    """Bytes `text` takes in the scrollback: its UTF-8 length."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def row_size_bytes(text_size: int) -> int:
    """The cost against the scrollback cap of a row whose text takes `text_size` bytes.

    Counted the same whichever way the row is held, so that what the cap keeps does not
    depend on how the rows arrived (flood-skipped or emulated)."""
    return ROW_OVERHEAD_BYTES + text_size


def row_from_cells(line: Mapping[int, Cell], columns: int, wrapped: bool) -> Row:
    """Return the compact form of a pyte row (`line` maps column -> Cell, missing = blank)."""
    if not line:
        return EMPTY_WRAPPED_ROW if wrapped else EMPTY_ROW
    last = max(line)
    if last >= columns:  # pyte can leave cells past the edge (insert_characters, resize)
        inside = [x for x in line if x < columns]
        if not inside:
            return EMPTY_WRAPPED_ROW if wrapped else EMPTY_ROW
        last = max(inside)
    return _row_of_cells(list(map(line.__getitem__, range(last + 1))), wrapped)


def _row_of_cells(cells: "list[Cell] | tuple[Cell, ...]", wrapped: bool) -> Row:
    """The compact form of exactly `cells`, their styles compared cell by cell."""
    texts = list(map(_cell_text, cells))
    text = "".join(texts)
    styles = list(map(getitem, cells, repeat(_STYLE_FIELDS)))
    if styles.count(DEFAULT_STYLE) == len(styles):
        return Row(text, (), wrapped)
    one_char_per_cell = len(text) == len(cells) and set(map(len, texts)) == {1}
    return Row(text, runs_from_cell_styles(styles, texts, one_char_per_cell), wrapped)


def row_text(line: Mapping[int, Cell], columns: int) -> str:
    """Just the text `row_from_cells` would give (no styles): what detectors read, cheaply."""
    if not line:
        return ""
    last = max(line)
    if last >= columns:  # pyte can leave cells past the edge (insert_characters, resize)
        inside = [x for x in line if x < columns]
        if not inside:
            return ""
        last = max(inside)
    # Missing cells come back as the line's default (a blank) from __getitem__.
    return "".join(map(_cell_text, map(line.__getitem__, range(last + 1))))


def runs_from_cell_styles(styles: list[Style], texts: list[str], one_char_per_cell: bool) -> StyleRuns:
    """Merge per-cell styles into flat runs counted in characters."""
    runs: list[object] = []
    if one_char_per_cell:
        for style, group in groupby(styles):
            runs.append(intern_style(style))
            runs.append(len(list(group)))
    else:
        position = 0
        for style, group in groupby(styles):
            count = len(list(group))
            chars = sum(map(len, texts[position : position + count]))
            position += count
            if not chars:
                continue  # padding cells have no characters: their style is invisible
            if runs and runs[-2] == style:
                runs[-1] += chars  # type: ignore[operator]
            else:
                runs.append(intern_style(style))
                runs.append(chars)
    return canonical_runs(runs)


def canonical_runs(runs: list[object]) -> StyleRuns:
    """Return `runs` as a tuple, or () when everything is default (one canonical form)."""
    if len(runs) == 2 and runs[0] == DEFAULT_STYLE:
        return ()
    if not runs:
        return ()
    return tuple(runs)


def row_from_screen_cells(cells: tuple[Cell, ...], wrapped: bool) -> Row:
    """The compact form of a full-width row of cells (a wide character's right half has text
    ""), up to its last cell that is not a default blank."""
    last = len(cells) - 1
    while last >= 0 and cells[last] == BLANK:
        last -= 1
    if last < 0:
        return EMPTY_WRAPPED_ROW if wrapped else EMPTY_ROW
    return _row_of_cells(cells[:last + 1], wrapped)
