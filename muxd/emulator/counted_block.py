"""Scrollback rows kept as flood source whose costs are counted in the text, never line by line.

A `SourceBlock` measures every line it takes (SGR stripped, split, a cost and a row total a
line): for short coloured lines (`grep --color`) that costs more than libghostty's parse of
the same bytes. Most floods need none of it: ASCII lines without tabs, each narrower than the
pane (so a row each), whose escapes are all SGR of a few kinds. For those a `CountedBlock`
keeps the source alone and counts what the cap needs with string searches in C: a piece's
cost is its length less its SGR (`text.count` of each kind) and line ends, plus a row's
overhead a line. Eviction finds the line where the freed cost reaches what it must free the
same way, on the evicted stretch only (a guess from the mean line, then whole lines), so it
evicts exactly the rows a `SourceBlock` or the emulated scrollback would. Rows are rendered
when read, as in a `SourceBlock` (tests/test_emulator_identity.py proves both the same).
"""

from __future__ import annotations

import functools
import re
from operator import mul
from typing import NamedTuple

from .cell import Cell
from .line_layout import LINE_END, SGR_SAMPLE_CHARS, WHOLE_SGR
from .rows import ROW_OVERHEAD_BYTES, Row
from .source_block import (
    SOURCE_BLOCK_CHARS, SOURCE_MAX_CHARS_PER_COST_BYTE, FloodBlock, advance_attrs, render_line,
)

_KINDS_MAX = 8  # kinds of SGR sequence counted one by one; more: the lines are measured instead
COUNTED_BLOCK_CHARS = SOURCE_BLOCK_CHARS  # a block takes source up to this (then a new one begins)
_LINE_END_BYTES = LINE_END.encode("ascii")
# A line's cost beyond its text: its row's overhead, less the CRLF counted in its length.
_LINE_EXTRA_BYTES = ROW_OVERHEAD_BYTES - len(LINE_END)
_STEPS_MAX = 64  # lines a guessed line end is corrected by one at a time; further off: bisection


class Counted(NamedTuple):
    """What a piece of flood lines costs, counted (see counted_piece)."""

    lines: int
    cost: int
    kinds: frozenset[str]  # every escape in the piece begins one of these SGR sequences


@functools.lru_cache(maxsize=16)
def _line_wider_than(columns: int) -> re.Pattern[str]:
    """A line (after the first) holding more than `columns` characters, SGR included: a line
    feed, then more than that and its CR before the next one (one negated character the
    regex engine scans fast, where a class of two is several times slower)."""
    return re.compile(f"\n[^\n]{{{columns + 2}}}")


def counted_piece(text: str, has_sgr: bool, columns: int) -> Counted | None:
    """The lines and cost of the CRLF-terminated flood lines `text`, if a CountedBlock can hold
    them: ASCII without tabs, each line (SGR included) at most `columns` long, every escape
    one of a few kinds of SGR, and not so dense with SGR that they are rendered instead
    (SOURCE_MAX_CHARS_PER_COST_BYTE). Else None. Only C string searches, no step a line."""
    if not text.isascii() or "\t" in text:
        return None
    if text.find(LINE_END) > columns or _line_wider_than(columns).search(text) is not None:
        return None
    lines = text.count("\n")  # every line feed ends a line (flood lines: no bare CR or LF)
    plain = len(text)
    kinds: frozenset[str] = frozenset()
    if has_sgr:
        kinds = frozenset(WHOLE_SGR.findall(text, 0, SGR_SAMPLE_CHARS))
        counts = list(map(text.count, kinds))
        if len(kinds) > _KINDS_MAX or sum(counts) != text.count("\x1b"):
            return None
        plain -= sum(map(mul, map(len, kinds), counts))
    cost = plain + _LINE_EXTRA_BYTES * lines
    if has_sgr and len(text) > SOURCE_MAX_CHARS_PER_COST_BYTE * cost:
        return None
    return Counted(lines, cost, kinds)


def count_with(text: str, kinds: frozenset[str]) -> Counted:
    """Counted for flood lines `text` whose escapes all begin one of `kinds` (SGR sequences:
    none holds another, so their counts add up)."""
    lines = text.count("\n")
    plain = len(text) - sum(len(kind) * text.count(kind) for kind in kinds)
    return Counted(lines, plain + _LINE_EXTRA_BYTES * lines, kinds)


class CountedBlock(FloodBlock):
    """Consecutive scrollback rows, a line each, held as ASCII source (text + SGR + CRLF) with
    only totals kept (module docstring). Same surface as a SourceBlock for the Scrollback."""

    def __init__(self, columns: int, start_attrs: Cell, default: Cell) -> None:
        super().__init__(columns, start_attrs, default)
        self._kinds: list[bytes] = []  # every SGR kind the source holds, as bytes
        self.has_sgr = False
        self.lines = 0  # lines added, evicted or not
        self.cost = 0  # their cost
        self.start = 0  # where the first retained line begins in the source
        self.dropped_lines = 0
        self.dropped_cost = 0

    @property
    def row_count(self) -> int:
        return self.lines - self.dropped_lines

    @property
    def size_bytes(self) -> int:
        return self.cost - self.dropped_cost

    @property
    def source_chars(self) -> int:
        return len(self._source)

    @property
    def room_chars(self) -> int:
        """Source it may still take."""
        return COUNTED_BLOCK_CHARS - len(self._source)

    @property
    def full(self) -> bool:
        return self.room_chars <= 0

    def seal(self) -> None:
        """Give back the spare room of the buffer: nothing more will be added."""
        self._source = bytes(self._source)  # type: ignore[assignment]

    def extend(self, text: str, counted: Counted, end_attrs: Cell) -> None:
        """Add the flood lines `text` (counted_piece's `counted`); `end_attrs`: the state after."""
        self._source += text.encode("ascii")
        self.lines += counted.lines
        self.cost += counted.cost
        for kind in counted.kinds:
            encoded = kind.encode("ascii")
            if encoded not in self._kinds:
                self._kinds.append(encoded)
        self.has_sgr = self.has_sgr or bool(counted.kinds)
        self.end_attrs = end_attrs

    # -- eviction ------------------------------------------------------------------------

    def _cost_of(self, begin: int, end: int, lines: int) -> int:
        """The cost of the `lines` whole lines source[begin:end]."""
        source = self._source
        sgr = sum(len(kind) * source.count(kind, begin, end) for kind in self._kinds)
        return end - begin - sgr + _LINE_EXTRA_BYTES * lines

    def _after_lines(self, begin: int, lines: int) -> int:
        """Where `lines` lines from `begin` (a line's start) end: a guess from the mean line
        of what is left, counted, then corrected a line at a time."""
        source, step = self._source, len(_LINE_END_BYTES)
        mean = (len(source) - begin) / max(self.row_count, 1)
        guess = min(begin + int(lines * mean), len(source))
        position = source.rfind(_LINE_END_BYTES, begin, guess)
        position = begin if position < 0 else position + step
        done = source.count(b"\n", begin, position)  # (a one-byte count is the fast one)
        if abs(done - lines) > _STEPS_MAX:  # lines of very mixed lengths: halve the stretch instead
            return self._bisect_lines(begin, lines)
        while done < lines:
            position = source.index(_LINE_END_BYTES, position) + step
            done += 1
        while done > lines:
            before = source.rfind(_LINE_END_BYTES, begin, position - step)
            position = begin if before < 0 else before + step
            done -= 1
        return position

    def _bisect_lines(self, begin: int, lines: int) -> int:
        """_after_lines by halving: the shortest source[begin:end] holding `lines` line feeds."""
        source = self._source
        low, high, below = begin, len(source), 0  # `below`: line feeds in source[begin:low]
        while high - low > 1:
            middle = (low + high) // 2
            found = source.count(b"\n", low, middle)
            if below + found < lines:
                low, below = middle, below + found
            else:
                high = middle
        return high

    def evict(self, excess_bytes: int) -> tuple[int, int]:
        """Drop the oldest rows until `excess_bytes` are freed; return (bytes, rows) freed."""
        left_cost, left_rows = self.size_bytes, self.row_count
        if excess_bytes >= left_cost:
            freed, rows, end = left_cost, left_rows, len(self._source)
        else:
            source, step, begin = self._source, len(_LINE_END_BYTES), self.start
            rows = min(max(-(-excess_bytes * left_rows // left_cost), 1), left_rows)
            end = self._after_lines(begin, rows)
            freed = self._cost_of(begin, end, rows)
            while freed < excess_bytes:  # a line more
                after = source.index(_LINE_END_BYTES, end) + step
                freed += self._cost_of(end, after, 1)
                end, rows = after, rows + 1
            while rows > 1:  # the fewest lines that free enough, as whole rows evict
                last = source.rfind(_LINE_END_BYTES, begin, end - step)
                last = begin if last < 0 else last + step
                cost = self._cost_of(last, end, 1)
                if freed - cost < excess_bytes:
                    break
                freed, end, rows = freed - cost, last, rows - 1
        self.start = end
        self.dropped_lines += rows
        self.dropped_cost += freed
        return freed, rows

    # -- reading -------------------------------------------------------------------------

    def rows(self, first: int, stop: int) -> list[Row]:
        """Render retained rows [first, stop) (0 = the oldest retained row of this block)."""
        if stop <= first:
            return []
        source = self._source
        begin = self.start
        if first:
            begin = self._after_lines(begin, first)
        attrs = self.start_attrs
        if self.has_sgr and begin:
            attrs = advance_attrs(attrs, source[:begin].decode("ascii"), self.default)
        end = self._after_lines(begin, min(stop, self.row_count) - first)
        out: list[Row] = []
        for line in source[begin:end].decode("ascii").split(LINE_END)[:-1]:
            rendered, attrs = render_line(line, attrs, self.columns, self.default)
            out.extend(rendered)
        return out
