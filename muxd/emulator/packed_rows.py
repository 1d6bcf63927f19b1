"""Emulated scrollback rows packed into a few flat buffers, unpacked to `Row`s when read.

A `Row` of two characters costs ~130 bytes of Python objects (the tuple, its str, a list
slot), ~190 with a style run. Packed, a row costs its UTF-8 text plus 9 bytes (a text end
offset, a wrap flag, a run end offset) plus 8 bytes a style run (a style index, a count),
plus 8 bytes for each distinct style of the chunk (style_codes.py), so the scrollback cap
(rows.row_size_bytes) bounds real memory for rows of up to two runs.
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from operator import attrgetter
from typing import Sequence

from .cell import Style
from .rows import ROW_OVERHEAD_BYTES, Row, text_bytes
from .style_codes import style_code, style_from_code

_wrapped = attrgetter("wrapped")


class PackedRows:
    """A run of rows, read-only but for eviction from the front (by moving `start`)."""

    __slots__ = ("_text", "_text_ends", "_wrapped", "_styles", "_runs", "_run_ends", "start", "size_bytes")

    def __init__(self, rows: Sequence[Row]) -> None:
        texts = [row.text for row in rows]
        joined = "".join(texts)
        if joined.isascii():
            self._text = joined.encode("ascii")
            self._text_ends = array("I", list(accumulate(map(len, texts))))
        else:
            self._text = joined.encode("utf-8", "surrogatepass")
            self._text_ends = array("I", list(accumulate(map(text_bytes, texts))))
        self._wrapped = bytes(map(_wrapped, rows))
        # Runs flattened to (style index, character count) pairs; None when no row has any.
        # The styles themselves as codes (or, for a colour codes cannot hold, as objects).
        self._styles: array[int] | list[Style] = []
        self._runs: array[int] | None = None
        self._run_ends: array[int] | None = None
        if any(row.runs for row in rows):
            self._pack_runs(rows)
        self.start = 0
        self.size_bytes = ROW_OVERHEAD_BYTES * len(rows) + (self._text_ends[-1] if rows else 0)

    def _pack_runs(self, rows: Sequence[Row]) -> None:
        index: dict[Style, int] = {}
        runs = array("I")
        ends = array("I")
        for row in rows:
            row_runs = row.runs
            for position in range(0, len(row_runs), 2):
                style = row_runs[position]
                number = index.get(style)
                if number is None:
                    number = index[style] = len(index)
                runs.append(number)
                runs.append(row_runs[position + 1])
            ends.append(len(runs))
        codes = list(map(style_code, index))
        self._styles = list(index) if None in codes else array("Q", codes)
        self._runs, self._run_ends = runs[:], ends[:]  # copies without the spare room

    @property
    def row_count(self) -> int:
        return len(self._text_ends) - self.start

    def evict(self, excess_bytes: int) -> tuple[int, int]:
        """Drop the oldest rows until `excess_bytes` are freed; return (bytes, rows) freed."""
        ends = self._text_ends
        start = first = self.start
        previous = ends[start - 1] if start else 0
        freed = 0
        while freed < excess_bytes and start < len(ends):
            end = ends[start]
            freed += ROW_OVERHEAD_BYTES + end - previous
            previous = end
            start += 1
        self.start = start
        self.size_bytes -= freed
        return freed, start - first

    def rows(self, first: int, stop: int) -> list[Row]:
        """Retained rows [first, stop) (0 = the oldest retained row), unpacked."""
        first += self.start
        stop = min(stop + self.start, len(self._text_ends))
        text, ends, wrapped = self._text, self._text_ends, self._wrapped
        runs, run_ends = self._runs, self._run_ends
        styles = self._styles
        if isinstance(styles, array):
            styles = list(map(style_from_code, styles))
        out: list[Row] = []
        begin = ends[first - 1] if first else 0
        run_begin = run_ends[first - 1] if run_ends is not None and first else 0
        for number in range(first, stop):
            end = ends[number]
            row_runs: tuple[object, ...] = ()
            if runs is not None and run_ends is not None:
                run_end = run_ends[number]
                if run_end > run_begin:
                    pairs = runs[run_begin:run_end]
                    row_runs = tuple(styles[value] if not position % 2 else value for position, value in enumerate(pairs))
                run_begin = run_end
            out.append(Row(text[begin:end].decode("utf-8", "surrogatepass"), row_runs, bool(wrapped[number])))
            begin = end
        return out
