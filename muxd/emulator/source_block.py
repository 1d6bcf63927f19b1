"""Scrollback rows kept as the source text that produced them, rendered only when read.

During an output flood (`cat` of a big file) whole lines of printable ASCII and SGR sequences
scroll off the screen without ever being emulated. A `SourceBlock` keeps those lines with the
cursor attributes in force before the first one; rows are rendered on demand and must equal
what full emulation would have put in scrollback (tests/test_emulator_identity.py proves it).
Sizes for the scrollback cap come from the visible length of each line, without rendering.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from operator import add

from .cell import DEFAULT_STYLE, Cell
from .parser import parse_csi_params
from .rows import Row, canonical_runs, row_size_bytes
from .sgr import apply_sgr, intern_style

SGR_SEQUENCE = re.compile(r"\x1b\[([0-9;]*)m")
LINE_END = "\r\n"
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


def rows_for_width(visible: int, columns: int) -> int:
    """Rows a line of `visible` cells takes when wrapped at `columns` (an empty line takes one)."""
    return (visible - 1) // columns + 1 if visible else 1


def source_size_bytes(text: str, has_sgr: bool, columns: int) -> int:
    """Scrollback bytes the complete lines in `text` would occupy, without rendering them."""
    visible = _visible_lengths(text, has_sgr)
    if max(visible) <= columns:
        return sum(visible) + len(visible)
    return sum(visible) + sum(rows_for_width(v, columns) for v in visible)


def _visible_lengths(text: str, has_sgr: bool) -> list[int]:
    """Printable characters (= cells: the text is ASCII) of each CRLF-terminated line."""
    if has_sgr:
        text = SGR_SEQUENCE.sub("", text)
    lengths = list(map(len, text.split(LINE_END)))
    lengths.pop()  # the empty string after the last CRLF
    return lengths


class SourceBlock:
    """Consecutive scrollback rows held as source lines (ASCII + SGR, CRLF stripped).

    Row and byte positions are absolute since the block was created; `byte_ends[i]` and
    `row_ends[i]` are the totals through line `i`, so eviction and lookup are bisections.
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

    @property
    def row_count(self) -> int:
        return (self.row_ends[-1] if self.row_ends else self.base_rows) - self.dropped_rows

    @property
    def size_bytes(self) -> int:
        return (self.byte_ends[-1] if self.byte_ends else self.base_bytes) - self.dropped_bytes

    def append_text(self, text: str, has_sgr: bool, end_attrs: Cell) -> None:
        """Add CRLF-terminated source lines; `end_attrs` is the state after the last one."""
        lines = text.split(LINE_END)
        lines.pop()
        visible = _visible_lengths(text, has_sgr)
        columns = self.columns
        last_bytes = self.byte_ends[-1] if self.byte_ends else self.base_bytes
        last_rows = self.row_ends[-1] if self.row_ends else self.base_rows
        if max(visible) <= columns:
            self.row_ends.extend(range(last_rows + 1, last_rows + len(lines) + 1))
            sizes = [v + 1 for v in visible]
        else:
            rows = [rows_for_width(v, columns) for v in visible]
            self.row_ends.extend(map(last_rows.__add__, accumulate(rows)))
            sizes = list(map(add, visible, rows))  # each row costs its cells + 1
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
            visible = self.byte_ends[index] - base_bytes - line_rows
            done_rows = max(self.dropped_rows - base_rows, 0)  # rows of this line already gone
            position = max(self.dropped_bytes, base_bytes)
            while position < target:  # evict whole rows, as the emulated scrollback would
                position += row_size_bytes(min(self.columns, visible - done_rows * self.columns))
                done_rows += 1
            self.start = index + 1 if done_rows == line_rows else index
            self.dropped_bytes, self.dropped_rows = position, base_rows + done_rows
        if self.has_sgr and self.start > old_start:
            dropped = "".join(self.lines[old_start : self.start])
            self.start_attrs = advance_attrs(self.start_attrs, dropped, self.default)
        self._compact()
        return self.dropped_bytes - old_bytes, self.dropped_rows - old_rows

    def _compact(self) -> None:
        if self.start < _COMPACT_AFTER_LINES or self.start * 2 < len(self.lines):
            return
        self.base_bytes, self.base_rows = self._line_base(self.start)
        del self.lines[: self.start]
        del self.byte_ends[: self.start]
        del self.row_ends[: self.start]
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
    if "\x1b" not in line:
        style = intern_style(attrs[1:])  # type: ignore[arg-type]
        chunks = [line[i : i + columns] for i in range(0, len(line), columns)] or [""]
        last = len(chunks) - 1
        if style == DEFAULT_STYLE:
            return [Row(chunk, (), i != last) for i, chunk in enumerate(chunks)], attrs
        return [
            Row(chunk, (style, len(chunk)) if chunk else (), i != last)
            for i, chunk in enumerate(chunks)
        ], attrs
    # SGR_SEQUENCE.split alternates visible text and SGR parameters: [text, params, ..., text].
    pieces: list[tuple[str, object]] = []
    for index, part in enumerate(SGR_SEQUENCE.split(line)):
        if index % 2:
            attrs = apply_sgr(attrs, parse_csi_params(part), default)
        elif part:
            pieces.append((part, intern_style(attrs[1:])))  # type: ignore[arg-type]
    rows: list[Row] = []
    texts: list[str] = []
    runs: list[object] = []
    used = 0
    for text, style in pieces:
        while text:
            if used == columns:
                rows.append(Row("".join(texts), canonical_runs(runs), True))
                texts, runs, used = [], [], 0
            take = text[: columns - used]
            text = text[len(take) :]
            texts.append(take)
            if runs and runs[-2] == style:
                runs[-1] += len(take)  # type: ignore[operator]
            else:
                runs.extend((style, len(take)))
            used += len(take)
    rows.append(Row("".join(texts), canonical_runs(runs), False))
    return rows, attrs
