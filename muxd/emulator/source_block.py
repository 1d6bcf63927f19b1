"""Scrollback rows kept as the source text that produced them, rendered only when read.

During an output flood (`cat` of a big file) whole lines of printable text and SGR sequences
scroll off the screen without ever being emulated. A `SourceBlock` keeps those lines with the
cursor attributes in force before the first one; rows are rendered on demand and must equal
what full emulation would have put in scrollback (tests/test_emulator_identity.py proves it).
Sizes for the scrollback cap come from each line's geometry (line_layout.py), without
rendering.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from operator import add
from typing import Sequence

from .cell import DEFAULT_STYLE, Cell
from .line_layout import (
    SGR_SEQUENCE,
    block_geometry,
    is_narrow,
    lay_out_line,
    needs_layout,
    next_tab_column,
    split_lines,
)
from .parser import parse_csi_params
from .rows import Row, canonical_runs, row_size_bytes
from .sgr import apply_sgr, intern_style

_FULL_RESETS = ("\x1b[m", "\x1b[0m")
# Drop evicted lines from the front of the lists once this many have piled up.
_COMPACT_AFTER_LINES = 4096


def advance_attrs(attrs: Cell, text: str, default: Cell) -> Cell:
    """Return the cursor attributes after emulating every SGR sequence in `text`."""
    if "\x1b" not in text:
        return attrs
    last_reset = max(text.rfind(reset) for reset in _FULL_RESETS)
    if last_reset >= 0:  # nothing before a full reset can matter
        attrs, text = default, text[last_reset:]
    for params in SGR_SEQUENCE.findall(text):
        attrs = apply_sgr(attrs, parse_csi_params(params), default)
    return attrs


def source_size_bytes(text: str, has_sgr: bool, columns: int) -> int:
    """Scrollback bytes the complete lines in `text` would occupy, without rendering them."""
    geometry = block_geometry(text, has_sgr, columns)
    widths = geometry.widths
    if not geometry.irregular and max(widths) <= columns:
        return sum(widths) + len(widths)
    return sum(widths) + sum(geometry.row_counts(columns))


class SourceBlock:
    """Consecutive scrollback rows held as source lines (text + SGR, CRLF stripped).

    Row and byte positions are absolute since the block was created; `byte_ends[i]` and
    `row_ends[i]` are the totals through line `i`, so eviction and lookup are bisections.
    Lines whose rows are not all full (wide or zero-width characters) have their row text
    lengths in `irregular`, for evicting part of them.
    """

    def __init__(self, columns: int, start_attrs: Cell, default: Cell) -> None:
        self.columns = columns
        self.default = default
        self.start_attrs = start_attrs  # attributes before lines[start]
        self.end_attrs = start_attrs  # attributes after the last line
        self.lines: list[str] = []
        self.byte_ends = array("q")
        self.row_ends = array("q")
        self.base_bytes = 0  # totals before lines[0]
        self.base_rows = 0
        self.start = 0  # first line with a retained row
        self.dropped_bytes = 0  # absolute totals evicted so far
        self.dropped_rows = 0
        self.has_sgr = False
        self.irregular: dict[int, tuple[int, ...]] = {}  # index in `lines` -> row text lengths

    @property
    def row_count(self) -> int:
        return (self.row_ends[-1] if self.row_ends else self.base_rows) - self.dropped_rows

    @property
    def size_bytes(self) -> int:
        return (self.byte_ends[-1] if self.byte_ends else self.base_bytes) - self.dropped_bytes

    def append_text(self, text: str, has_sgr: bool, end_attrs: Cell) -> None:
        """Add CRLF-terminated source lines; `end_attrs` is the state after the last one."""
        lines = split_lines(text)
        columns = self.columns
        geometry = block_geometry(text, has_sgr, columns, lines)
        widths = geometry.widths
        last_bytes = self.byte_ends[-1] if self.byte_ends else self.base_bytes
        last_rows = self.row_ends[-1] if self.row_ends else self.base_rows
        if not geometry.irregular and max(widths) <= columns:
            self.row_ends.extend(range(last_rows + 1, last_rows + len(lines) + 1))
            sizes = [width + 1 for width in widths]
        else:
            rows = geometry.row_counts(columns)
            self.row_ends.extend(map(last_rows.__add__, accumulate(rows)))
            sizes = list(map(add, widths, rows))  # each row costs its text + 1
            first = len(self.lines)
            for index, lengths in geometry.irregular.items():
                self.irregular[first + index] = lengths
        self.byte_ends.extend(map(last_bytes.__add__, accumulate(sizes)))
        self.lines.extend(lines)
        self.has_sgr = self.has_sgr or has_sgr
        self.end_attrs = end_attrs

    def _line_base(self, index: int) -> tuple[int, int]:
        """Absolute (bytes, rows) before line `index`."""
        if index == 0:
            return self.base_bytes, self.base_rows
        return self.byte_ends[index - 1], self.row_ends[index - 1]

    def evict(self, excess_bytes: int) -> tuple[int, int]:
        """Drop the oldest rows until `excess_bytes` are freed; return (bytes, rows) freed."""
        old_bytes, old_rows, old_start = self.dropped_bytes, self.dropped_rows, self.start
        target = self.dropped_bytes + excess_bytes
        if not self.lines or target >= self.byte_ends[-1]:
            self.start = len(self.lines)
            self.dropped_bytes, self.dropped_rows = self._line_base(self.start)
        else:
            index = bisect_left(self.byte_ends, target, self.start)
            base_bytes, base_rows = self._line_base(index)
            line_rows = self.row_ends[index] - base_rows
            lengths = self._row_lengths(index, self.byte_ends[index] - base_bytes - line_rows, line_rows)
            done_rows = max(self.dropped_rows - base_rows, 0)  # rows of this line already gone
            position = max(self.dropped_bytes, base_bytes)
            while position < target:  # evict whole rows, as the emulated scrollback would
                position += row_size_bytes(lengths[done_rows])
                done_rows += 1
            self.start = index + 1 if done_rows == line_rows else index
            self.dropped_bytes, self.dropped_rows = position, base_rows + done_rows
        if self.has_sgr and self.start > old_start:
            dropped = "".join(self.lines[old_start : self.start])
            self.start_attrs = advance_attrs(self.start_attrs, dropped, self.default)
        self._compact()
        return self.dropped_bytes - old_bytes, self.dropped_rows - old_rows

    def _row_lengths(self, index: int, width: int, rows: int) -> Sequence[int]:
        """Text lengths of the rows of line `index` (`width` and `rows` from the totals)."""
        lengths = self.irregular.get(index)
        if lengths is not None:
            return lengths
        columns = self.columns
        return [min(columns, width - row * columns) for row in range(rows)]

    def _compact(self) -> None:
        if self.start < _COMPACT_AFTER_LINES or self.start * 2 < len(self.lines):
            return
        start = self.start
        self.base_bytes, self.base_rows = self._line_base(start)
        del self.lines[:start]
        del self.byte_ends[:start]
        del self.row_ends[:start]
        if self.irregular:
            self.irregular = {index - start: rows for index, rows in self.irregular.items() if index >= start}
        self.start = 0

    def rows(self, first: int, stop: int) -> list[Row]:
        """Render retained rows [first, stop) (0 = the oldest retained row of this block)."""
        first_abs, stop_abs = first + self.dropped_rows, stop + self.dropped_rows
        index = bisect_right(self.row_ends, first_abs, self.start)
        attrs = self.start_attrs
        if self.has_sgr and index > self.start:
            attrs = advance_attrs(attrs, "".join(self.lines[self.start : index]), self.default)
        out: list[Row] = []
        row_abs = self._line_base(index)[1]
        while index < len(self.lines) and row_abs < stop_abs:
            rendered, attrs = render_line(self.lines[index], attrs, self.columns, self.default)
            for row in rendered:
                if first_abs <= row_abs < stop_abs:
                    out.append(row)
                row_abs += 1
            index += 1
        return out


def render_line(line: str, attrs: Cell, columns: int, default: Cell) -> tuple[list[Row], Cell]:
    """Rows that emulating `line` + CRLF produces from a fresh row, and the attributes after."""
    if "\x1b" not in line and "\t" not in line and (line.isascii() or not needs_layout(line)):
        style = intern_style(attrs[1:])  # type: ignore[arg-type]
        if len(line) <= columns:  # the commonest case, on its own for speed
            return [Row(line, (style, len(line)) if line and style != DEFAULT_STYLE else (), False)], attrs
        chunks = [line[i : i + columns] for i in range(0, len(line), columns)] or [""]
        last = len(chunks) - 1
        if style == DEFAULT_STYLE:
            return [Row(chunk, (), i != last) for i, chunk in enumerate(chunks)], attrs
        return [
            Row(chunk, (style, len(chunk)) if chunk else (), i != last)
            for i, chunk in enumerate(chunks)
        ], attrs
    if not is_narrow(line):
        return lay_out_line(line, attrs, columns, default)
    # SGR_SEQUENCE.split alternates visible text and SGR parameters: [text, params, ..., text];
    # tabs split the text further, into pieces of "" (a tab) and (text, style).
    pieces: list[tuple[str, object]] = []
    for index, part in enumerate(SGR_SEQUENCE.split(line)):
        if index % 2:
            attrs = apply_sgr(attrs, parse_csi_params(part), default)
        elif part:
            style = intern_style(attrs[1:])  # type: ignore[arg-type]
            for number, text in enumerate(part.split("\t")):
                if number:
                    pieces.append(("", None))
                if text:
                    pieces.append((text, style))
    gap_style = intern_style(default[1:])  # type: ignore[arg-type]  # cells a tab skips stay blank
    rows: list[Row] = []
    texts: list[str] = []
    runs: list[object] = []
    used = gap = 0  # `gap`: blanks a tab left before the next written cell

    def add(text: str, style: object) -> None:
        texts.append(text)
        if runs and runs[-2] == style:
            runs[-1] += len(text)  # type: ignore[operator]
        else:
            runs.extend((style, len(text)))

    for text, style in pieces:
        if not text:  # a tab never wraps, so `used` stays below `columns`
            target = next_tab_column(used, columns)
            gap += target - used
            used = target
            continue
        while text:
            if used == columns:
                rows.append(Row("".join(texts), canonical_runs(runs), True))
                texts, runs, used = [], [], 0
            if gap:
                add(" " * gap, gap_style)
                gap = 0
            take = text[: columns - used]
            text = text[len(take) :]
            add(take, style)
            used += len(take)
    rows.append(Row("".join(texts), canonical_runs(runs), False))
    return rows, attrs
