"""Scrollback rows kept as the source text that produced them, rendered only when read.

During an output flood (`cat` of a big file) whole lines of printable text and SGR sequences
scroll off the screen without ever being emulated. A `SourceBlock` keeps up to
SOURCE_BLOCK_LINES of those lines (or SOURCE_BLOCK_CHARS of their source), as UTF-8, with
the cursor attributes in force before the first one; rows are rendered on demand and must
equal what full emulation would have put in scrollback (tests/test_emulator_identity.py
proves it). Costs for the scrollback cap come from each line's geometry (line_layout.py),
without rendering. Small blocks bound what eviction leaves behind (a block's memory goes
with its last row) and what a read has to split and decode.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate, compress, count, islice, repeat
from operator import add, gt, mul
from typing import Iterable, Sequence

from .cell import DEFAULT_STYLE, Cell
from .line_layout import (
    LINE_END,
    SGR_SEQUENCE,
    block_geometry,
    is_narrow,
    lay_out_line,
    needs_layout,
    next_tab_column,
    split_lines,
    strip_sgr,
)
from .csi_params import parse_csi_params
from .rows import ROW_OVERHEAD_BYTES, Row, canonical_runs, row_size_bytes
from .sgr import apply_sgr, intern_style

# A block takes lines until it holds this many, or this much source (characters: text, SGR, CRLF).
SOURCE_BLOCK_LINES = 1024
SOURCE_BLOCK_CHARS = 64 * 1024
# A flood line of more source characters than this many times its cost is rendered into
# rows instead: SGR sequences the rows do not keep (a colour for every character, repeated
# resets, long parameter lists) would otherwise hold memory the cap does not count.
SOURCE_MAX_CHARS_PER_COST_BYTE = 3

FULL_RESETS = ("\x1b[m", "\x1b[0m")


def last_full_reset(text: str) -> int:
    """Where the last full SGR reset in `text` begins (-1 if none). Each kind is looked for
    only after the last one found: a flood resets on every line, and a kind it never writes
    is not searched for through the whole text."""
    last = -1
    for reset in FULL_RESETS:
        last = max(last, text.rfind(reset, last + 1))
    return last


def advance_attrs(attrs: Cell, text: str, default: Cell) -> Cell:
    """Return the cursor attributes after emulating every SGR sequence in `text`."""
    if "\x1b" not in text:
        return attrs
    last_reset = last_full_reset(text)
    if last_reset >= 0:  # nothing before a full reset can matter
        attrs, text = default, text[last_reset:]
    for params in SGR_SEQUENCE.findall(text):
        attrs = apply_sgr(attrs, parse_csi_params(params), default)
    return attrs


class FloodLines:
    """CRLF-terminated flood lines measured once, then handed to blocks a slice at a time."""

    __slots__ = ("text", "rows", "sizes", "irregular", "sized_lines", "dense_lines", "has_sgr", "one_row_each",
                 "total_cost", "_costs", "_lines")

    def __init__(self, text: str, rows: list[int], sizes: list[int], irregular: dict[int, tuple[int, ...]],
                 sized_lines: list[int], dense_lines: list[int], has_sgr: bool, lines: list[str] | None,
                 text_bytes: int | None = None) -> None:
        self.text = text
        self.rows = rows  # rows each line takes
        self.sizes = sizes  # the UTF-8 bytes of each line's rows' texts together
        self.irregular = irregular  # line -> its rows' text sizes (BlockGeometry)
        self.sized_lines = sized_lines  # the irregular lines of several rows, in order (one row needs no sizes)
        self.dense_lines = dense_lines  # lines to render rather than hold (SOURCE_MAX_CHARS_PER_COST_BYTE), in order
        self.has_sgr = has_sgr
        row_count = sum(rows)
        self.one_row_each = len(rows) == row_count  # a line takes a row at least
        # The cost of all the lines (`text_bytes`: their sizes' sum, if the caller knows it).
        self.total_cost = (sum(sizes) if text_bytes is None else text_bytes) + ROW_OVERHEAD_BYTES * row_count
        self._costs: list[int] | None = None
        self._lines = lines

    @property
    def costs(self) -> list[int]:
        """Each line's rows' cost against the scrollback cap."""
        if self._costs is None:
            overheads = map(mul, self.rows, repeat(ROW_OVERHEAD_BYTES))
            self._costs = list(map(add, self.sizes, overheads))
        return self._costs

    def cost_totals(self, base: int, first: int, stop: int) -> list[int]:
        """base + the cost of lines [first, first + 1), [first, first + 2), ... [first, stop)."""
        if not self.one_row_each:
            return running_totals(base, islice(self.costs, first, stop))
        # A row each: no list of costs needed.
        return running_totals(base, map(add, islice(self.sizes, first, stop), repeat(ROW_OVERHEAD_BYTES)))

    @property
    def lines(self) -> list[str]:
        """The lines without their CRLF, split only when asked for: with SGR in them, measuring
        splits the text without it, and the lines themselves are seldom needed (end_of)."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def end_of(self, first: int, stop: int, begin: int) -> int:
        """Where in `text` lines [first, stop) end, line `first` beginning at `begin`."""
        if stop == len(self.rows) > first:  # all the rest: no need to split the text
            return self.text.rindex(LINE_END) + len(LINE_END)
        if self._lines is None:  # cheaper than splitting the text into lines
            return self._lines_end(begin, stop - first)
        return begin + sum(map(len, islice(self.lines, first, stop))) + len(LINE_END) * (stop - first)

    def _lines_end(self, begin: int, lines: int) -> int:
        """Where `lines` lines from `begin` (a line's start) end: a guess from the mean line
        length, counted (C work), then corrected a line at a time."""
        text, step = self.text, len(LINE_END)
        guess = min(begin + lines * len(text) // max(len(self.rows), 1), len(text))
        position = self._line_start_before(begin, guess)
        done = text.count(LINE_END, begin, position)
        while done < lines:
            position = text.index(LINE_END, position) + step
            done += 1
        while done > lines:
            position = self._line_start_before(begin, position - step)
            done -= 1
        return position

    def _line_start_before(self, begin: int, position: int) -> int:
        """The start of the line holding `position` (`begin` at the earliest)."""
        found = self.text.rfind(LINE_END, begin, position)
        return begin if found < 0 else found + len(LINE_END)


def measure_lines(text: str, has_sgr: bool, columns: int) -> FloodLines:
    """Measure the complete lines of `text` (flood lines: printable text and SGR sequences)
    without rendering them."""
    plain = strip_sgr(text) if has_sgr else text
    plain_lines = split_lines(plain)
    if plain.isascii() and "\t" not in plain:  # the commonest: a character a cell, a byte each
        sizes = list(map(len, plain_lines))
        if max(sizes, default=0) <= columns:  # and a row a line
            flood = FloodLines(text, [1] * len(sizes), sizes, {}, [], [], has_sgr, None if has_sgr else plain_lines,
                               len(plain) - len(LINE_END) * len(sizes))
            return _mark_dense(flood) if has_sgr else flood
    geometry = block_geometry(plain, False, columns, plain_lines)
    sizes = geometry.text_sizes
    if not geometry.irregular and max(geometry.widths, default=0) <= columns:  # one row a line, the commonest
        rows = [1] * len(plain_lines)
    else:
        rows = geometry.row_counts(columns)
    irregular = geometry.irregular
    sized = sorted(index for index, sizes in irregular.items() if len(sizes) > 1)
    flood = FloodLines(text, rows, sizes, irregular, sized, [], has_sgr, None if has_sgr else plain_lines)
    return _mark_dense(flood) if has_sgr else flood


def _mark_dense(flood: FloodLines) -> FloodLines:
    """`flood` (with SGR) with its dense lines found. Without SGR a line's source is its text,
    well within its cost; and when the whole text is within SOURCE_MAX_CHARS_PER_COST_BYTE
    times the cost of its lines, so is the memory its lines hold together (a block's memory
    goes with its last row anyway)."""
    if len(flood.text) > SOURCE_MAX_CHARS_PER_COST_BYTE * flood.total_cost:
        held = map(len, flood.lines)
        allowed = map(mul, flood.costs, repeat(SOURCE_MAX_CHARS_PER_COST_BYTE))
        flood.dense_lines = list(compress(count(), map(gt, held, allowed)))
    return flood


def source_size_bytes(text: str, has_sgr: bool, columns: int) -> int:
    """Cost against the scrollback cap of the complete lines in `text`, without rendering them."""
    return measure_lines(text, has_sgr, columns).total_cost


def running_totals(base: int, values: Iterable[int]) -> list[int]:
    """base + values[0], base + values[0] + values[1], ... (a list: array.fromlist takes one
    several times faster than array.extend takes an iterator)."""
    totals = list(accumulate(values, initial=base))
    del totals[0]
    return totals


class FloodBlock:
    """What every block of flood source has: its pane width, default cell, the attributes in
    force before its first line and after its last, and its source (UTF-8)."""

    def __init__(self, columns: int, start_attrs: Cell, default: Cell) -> None:
        self.columns = columns
        self.default = default
        self.start_attrs = start_attrs  # attributes before the first line
        self.end_attrs = start_attrs  # attributes after the last line
        self._source = bytearray()

    @property
    def full(self) -> bool:
        raise NotImplementedError

    def continues(self, columns: int, attrs: Cell, default: Cell) -> bool:
        """Whether flood lines at this width, starting with `attrs`, may go on in this block."""
        return not self.full and self.columns == columns and self.end_attrs == attrs and self.default == default


class SourceBlock(FloodBlock):
    """Consecutive scrollback rows held as source lines (UTF-8 text + SGR + CRLF).

    Per line `i`, `cost_ends[i]` and `row_ends[i]` are the totals of cost and rows through
    line `i`, so eviction and lookup are bisections. Lines of several rows whose rows' text
    sizes do not follow from their cost have them in `_row_sizes` (found through
    `_sized_lines`, `_sized_ends`), for evicting part of them.
    """

    def __init__(self, columns: int, start_attrs: Cell, default: Cell) -> None:
        super().__init__(columns, start_attrs, default)
        self.source_chars = 0
        self.cost_ends = array("I")
        self.row_ends = array("I")
        self.start = 0  # first line with a retained row
        self.dropped_cost = 0  # totals evicted so far
        self.dropped_rows = 0
        self.has_sgr = False
        self._sized_lines = array("I")  # ascending line indexes
        self._sized_ends = array("I")  # end of each one's sizes in _row_sizes
        self._row_sizes = array("I")

    @property
    def row_count(self) -> int:
        return (self.row_ends[-1] if self.row_ends else 0) - self.dropped_rows

    @property
    def size_bytes(self) -> int:
        return (self.cost_ends[-1] if self.cost_ends else 0) - self.dropped_cost

    @property
    def full(self) -> bool:
        return len(self.cost_ends) >= SOURCE_BLOCK_LINES or self.source_chars >= SOURCE_BLOCK_CHARS

    def seal(self) -> None:
        """Give back the spare room of the buffers: nothing more will be added."""
        self._source = bytes(self._source)  # type: ignore[assignment]
        self.cost_ends, self.row_ends = self.cost_ends[:], self.row_ends[:]

    def take(self, flood: FloodLines, first: int, stop: int, begin: int) -> tuple[int, int]:
        """(stop, end): the lines [first, stop) of `flood` that fit here (one at least, none
        past `stop`) and where they end in its text; line `first` begins at `begin`."""
        stop = min(stop, first + SOURCE_BLOCK_LINES - len(self.cost_ends))
        end = flood.end_of(first, stop, begin)
        room = SOURCE_BLOCK_CHARS - self.source_chars
        if end - begin > room:
            cut = flood.text.rfind(LINE_END, begin, begin + room)
            if cut < 0:
                return first + 1, flood.end_of(first, first + 1, begin)
            end = cut + len(LINE_END)
            stop = first + flood.text.count(LINE_END, begin, end)
        return stop, end

    def extend(self, flood: FloodLines, first: int, stop: int, begin: int, end: int, end_attrs: Cell) -> None:
        """Add lines [first, stop) of `flood`, text[begin:end]; `end_attrs`: the state after them."""
        text = flood.text[begin:end]
        self._source += text.encode("utf-8", "surrogatepass")
        self.source_chars += len(text)
        cost_base = self.cost_ends[-1] if self.cost_ends else 0
        row_base = self.row_ends[-1] if self.row_ends else 0
        index_base = len(self.cost_ends) - first
        self.cost_ends.fromlist(flood.cost_totals(cost_base, first, stop))
        if flood.one_row_each:
            self.row_ends.fromlist(list(range(row_base + 1, row_base + 1 + stop - first)))
        else:
            self.row_ends.fromlist(running_totals(row_base, islice(flood.rows, first, stop)))
        sized = flood.sized_lines
        for index in sized[bisect_left(sized, first) : bisect_left(sized, stop)]:
            self._sized_lines.append(index_base + index)
            self._row_sizes.extend(flood.irregular[index])
            self._sized_ends.append(len(self._row_sizes))
        self.has_sgr = self.has_sgr or flood.has_sgr
        self.end_attrs = end_attrs

    def _line_base(self, index: int) -> tuple[int, int]:
        """(cost, rows) before line `index`."""
        if index == 0:
            return 0, 0
        return self.cost_ends[index - 1], self.row_ends[index - 1]

    def evict(self, excess_bytes: int) -> tuple[int, int]:
        """Drop the oldest rows until `excess_bytes` are freed; return (bytes, rows) freed."""
        old_cost, old_rows = self.dropped_cost, self.dropped_rows
        target = self.dropped_cost + excess_bytes
        if not self.cost_ends or target >= self.cost_ends[-1]:
            self.start = len(self.cost_ends)
            self.dropped_cost, self.dropped_rows = self._line_base(self.start)
        else:
            index = bisect_left(self.cost_ends, target, self.start)
            base_cost, base_rows = self._line_base(index)
            line_rows = self.row_ends[index] - base_rows
            sizes = self._row_text_sizes(index, self.cost_ends[index] - base_cost, line_rows)
            done_rows = max(self.dropped_rows - base_rows, 0)  # rows of this line already gone
            position = max(self.dropped_cost, base_cost)
            while position < target:  # evict whole rows, as the emulated scrollback would
                position += row_size_bytes(sizes[done_rows])
                done_rows += 1
            self.start = index + 1 if done_rows == line_rows else index
            self.dropped_cost, self.dropped_rows = position, base_rows + done_rows
        return self.dropped_cost - old_cost, self.dropped_rows - old_rows

    def _row_text_sizes(self, index: int, cost: int, rows: int) -> Sequence[int]:
        """Text sizes of the rows of line `index` (`cost` and `rows` from the totals)."""
        size = cost - rows * ROW_OVERHEAD_BYTES
        if rows == 1:
            return (size,)
        found = bisect_left(self._sized_lines, index)
        if found < len(self._sized_lines) and self._sized_lines[found] == index:
            begin = self._sized_ends[found - 1] if found else 0
            return self._row_sizes[begin : self._sized_ends[found]]
        columns = self.columns  # ASCII text (else sized): rows full but the last
        return [min(columns, size - row * columns) for row in range(rows)]

    def rows(self, first: int, stop: int) -> list[Row]:
        """Render retained rows [first, stop) (0 = the oldest retained row of this block)."""
        first_abs, stop_abs = first + self.dropped_rows, stop + self.dropped_rows
        index = bisect_right(self.row_ends, first_abs, self.start)
        lines = self._source.split(b"\r\n")
        attrs = self.start_attrs
        if self.has_sgr and index:
            before = sum(map(len, islice(lines, index))) + len(LINE_END) * index
            attrs = advance_attrs(attrs, self._source[:before].decode("utf-8", "surrogatepass"), self.default)
        out: list[Row] = []
        row_abs = self._line_base(index)[1]
        while index < len(self.row_ends) and row_abs < stop_abs:
            line = lines[index].decode("utf-8", "surrogatepass")
            rendered, attrs = render_line(line, attrs, self.columns, self.default)
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
