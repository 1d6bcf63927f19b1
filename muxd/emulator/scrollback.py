"""A pane's scrollback: rows that scrolled off the top of the main screen, capped in bytes.

Rows are held in segments, oldest first: `RowChunk`s of compact `Row`s from emulation and
`SourceBlock`s of unrendered flood lines. Whenever the total exceeds the cap, the oldest
rows are evicted one at a time until it fits again (so the result does not depend on how
the rows arrived).
"""

from __future__ import annotations

from collections import deque

from .cell import Cell
from .rows import Row, row_size_bytes
from .source_block import SourceBlock, advance_attrs, source_size_bytes

# Rows per RowChunk: small enough to evict cheaply, big enough to keep segments few.
ROW_CHUNK_ROWS = 1024


class RowChunk:
    """Up to ROW_CHUNK_ROWS emulated rows; evicted from the front by moving `start`."""

    def __init__(self) -> None:
        self.items: list[Row] = []
        self.start = 0
        self.size_bytes = 0

    @property
    def row_count(self) -> int:
        return len(self.items) - self.start

    @property
    def full(self) -> bool:
        return len(self.items) >= ROW_CHUNK_ROWS

    def append(self, row: Row) -> None:
        self.items.append(row)
        self.size_bytes += row_size_bytes(len(row.text))

    def evict(self, excess_bytes: int) -> tuple[int, int]:
        freed = 0
        start = self.start
        items = self.items
        while freed < excess_bytes and start < len(items):
            freed += row_size_bytes(len(items[start].text))
            items[start] = None  # type: ignore[call-overload]  # release the row now
            start += 1
        rows = start - self.start
        self.start = start
        self.size_bytes -= freed
        return freed, rows

    def rows(self, first: int, stop: int) -> list[Row]:
        return self.items[self.start + first : self.start + stop]


Segment = RowChunk | SourceBlock


class Scrollback:
    """Rows above the visible screen, oldest first, holding at most `cap_bytes`."""

    def __init__(self, cap_bytes: int) -> None:
        self.cap_bytes = max(0, cap_bytes)
        self._segments: deque[Segment] = deque()
        self.size_bytes = 0
        self.row_count = 0
        # Rows ever added, evicted or not: the running number that stays with a row for good
        # (read_pane's cursor counts on it; eviction and clearing never renumber).
        self.rows_added = 0

    def __len__(self) -> int:
        return self.row_count

    def clear(self) -> None:
        self._segments.clear()
        self.size_bytes = self.row_count = 0

    def unwrap_newest(self) -> None:
        """Mark the newest row as not continuing onto the screen (its successor was cleared)."""
        chunk = self._segments[-1] if self._segments else None
        if isinstance(chunk, RowChunk) and chunk.row_count and chunk.items[-1].wrapped:
            chunk.items[-1] = chunk.items[-1]._replace(wrapped=False)
        # A SourceBlock's newest row ends a line, so it is never wrapped.

    def append(self, row: Row) -> None:
        """Add one row that scrolled off the screen."""
        chunk = self._segments[-1] if self._segments else None
        if not isinstance(chunk, RowChunk) or chunk.full:
            chunk = RowChunk()
            self._segments.append(chunk)
        chunk.append(row)
        self.size_bytes += row_size_bytes(len(row.text))
        self.row_count += 1
        self.rows_added += 1
        if self.size_bytes > self.cap_bytes:
            self._evict()

    def append_source(
        self, text: str, has_sgr: bool, columns: int, start_attrs: Cell, end_attrs: Cell, default: Cell
    ) -> None:
        """Add the rows that CRLF-terminated flood lines `text` would scroll off, unrendered."""
        text, start_attrs = self._drop_doomed_prefix(text, has_sgr, columns, start_attrs, default)
        block = self._segments[-1] if self._segments else None
        if not (
            isinstance(block, SourceBlock)
            and block.columns == columns
            and block.end_attrs == start_attrs
            and block.default == default
        ):
            block = SourceBlock(columns, start_attrs, default)
            self._segments.append(block)
        rows, size = block.row_count, block.size_bytes
        block.append_text(text, has_sgr, end_attrs)
        self.row_count += block.row_count - rows
        self.rows_added += block.row_count - rows
        self.size_bytes += block.size_bytes - size
        if self.size_bytes > self.cap_bytes:
            self._evict()

    def _drop_doomed_prefix(
        self, text: str, has_sgr: bool, columns: int, attrs: Cell, default: Cell
    ) -> tuple[str, Cell]:
        """Cut lines that eviction would remove anyway: a suffix alone filling the cap."""
        if len(text) <= 2 * self.cap_bytes + 4096:
            return text, attrs
        window = 2 * self.cap_bytes + 4096
        while window < len(text):
            cut = text.find("\r\n", len(text) - window)
            if cut < 0:
                break
            suffix = text[cut + 2 :]
            if suffix and source_size_bytes(suffix, has_sgr, columns) >= self.cap_bytes:
                # Everything older than the suffix goes: older segments too.
                self.clear()
                return suffix, advance_attrs(attrs, text[: cut + 2], default)
            window *= 2
        return text, attrs

    def _evict(self) -> None:
        segments = self._segments
        while self.size_bytes > self.cap_bytes and segments:
            oldest = segments[0]
            freed_bytes, freed_rows = oldest.evict(self.size_bytes - self.cap_bytes)
            self.size_bytes -= freed_bytes
            self.row_count -= freed_rows
            if oldest.row_count == 0:
                segments.popleft()

    def rows(self, first: int, stop: int) -> list[Row]:
        """Rows [first, stop), 0 being the oldest retained row."""
        out: list[Row] = []
        offset = 0
        for segment in self._segments:
            count = segment.row_count
            if offset + count > first and offset < stop:
                out.extend(segment.rows(max(first - offset, 0), min(stop - offset, count)))
            offset += count
            if offset >= stop:
                break
        return out
