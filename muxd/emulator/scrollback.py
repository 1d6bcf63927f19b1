"""A pane's scrollback: rows that scrolled off the top of the main screen, capped in memory.

Rows are held in segments, oldest first: `RowChunk`s of emulated rows (packed into
`PackedRows` once full) and `SourceBlock`s of unrendered flood lines. Each row costs
rows.row_size_bytes against the cap, what it takes in memory packed (its text plus
bookkeeping), the same whichever way it arrived. Whenever the total exceeds the cap, the
oldest rows are evicted one at a time until it fits again (so the result does not depend on
how the rows arrived). Memory beyond the cap: the open RowChunk's rows, not packed yet, the
evicted front of the oldest segment (freed with its last row), and style runs beyond two a
row (packed_rows.py).
"""

from __future__ import annotations

from collections import deque

from .cell import Cell
from .counted_block import Counted, CountedBlock, count_with, counted_piece
from .line_layout import LINE_END
from .packed_rows import PackedRows
from .rows import Row, row_size_bytes, text_bytes
from .source_block import SourceBlock, advance_attrs, measure_lines, render_line, source_size_bytes

# An open chunk of emulated rows is packed once it has this many rows or this cost: few
# enough that unpacked rows (~130-250 bytes each) add little, many enough to pack rarely.
ROW_CHUNK_ROWS = 256
ROW_CHUNK_BYTES = 32 * 1024
# Flood text is measured this much at a time: measuring makes an object a line, and one
# read of the PTY can bring 65,000 short lines.
FLOOD_PIECE_CHARS = 128 * 1024


class RowChunk:
    """The newest emulated rows as `Row`s, until packed; evicted from the front by moving `start`."""

    def __init__(self) -> None:
        self.items: list[Row] = []
        self.start = 0
        self.size_bytes = 0

    @property
    def row_count(self) -> int:
        return len(self.items) - self.start

    @property
    def full(self) -> bool:
        return len(self.items) >= ROW_CHUNK_ROWS or self.size_bytes >= ROW_CHUNK_BYTES

    def append(self, row: Row, size: int) -> None:
        self.items.append(row)
        self.size_bytes += size

    def evict(self, excess_bytes: int) -> tuple[int, int]:
        freed = 0
        start = self.start
        items = self.items
        while freed < excess_bytes and start < len(items):
            freed += row_size_bytes(text_bytes(items[start].text))
            items[start] = None  # type: ignore[call-overload]  # release the row now
            start += 1
        rows = start - self.start
        self.start = start
        self.size_bytes -= freed
        return freed, rows

    def rows(self, first: int, stop: int) -> list[Row]:
        return self.items[self.start + first : self.start + stop]

    def packed(self) -> PackedRows:
        return PackedRows(self.items[self.start :])


Segment = RowChunk | PackedRows | SourceBlock | CountedBlock


class Scrollback:
    """Rows above the visible screen, oldest first, costing at most `cap_bytes`."""

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
        # The newest row is in an open RowChunk or ends a SourceBlock's line (never wrapped).

    def append(self, row: Row) -> None:
        """Add one row that scrolled off the screen."""
        chunk = self._segments[-1] if self._segments else None
        if not isinstance(chunk, RowChunk) or chunk.full:
            self._seal_newest()
            chunk = RowChunk()
            self._segments.append(chunk)
        size = row_size_bytes(text_bytes(row.text))
        chunk.append(row, size)
        self.size_bytes += size
        self.row_count += 1
        self.rows_added += 1
        if self.size_bytes > self.cap_bytes:
            self._evict()

    def _seal_newest(self) -> None:
        """Pack or trim the newest segment: a new one is about to follow it."""
        segments = self._segments
        if segments and isinstance(segments[-1], RowChunk):
            segments[-1] = segments[-1].packed()
        elif segments and isinstance(segments[-1], (SourceBlock, CountedBlock)):
            segments[-1].seal()

    def append_source(
        self, text: str, has_sgr: bool, columns: int, start_attrs: Cell, end_attrs: Cell, default: Cell
    ) -> None:
        """Add the rows that CRLF-terminated flood lines `text` would scroll off, unrendered."""
        text, attrs = self._drop_doomed_prefix(text, has_sgr, columns, start_attrs, default)
        position = 0
        while position < len(text):
            end = len(text)
            if end - position > FLOOD_PIECE_CHARS:
                end = text.rfind(LINE_END, position, position + FLOOD_PIECE_CHARS) + len(LINE_END)
                if end <= position + 1:  # one line longer than that
                    end = text.find(LINE_END, position + FLOOD_PIECE_CHARS) + len(LINE_END)
            piece = text[position:end]
            piece_sgr = has_sgr and "\x1b" in piece
            piece_end = end_attrs if end == len(text) else advance_attrs(attrs, piece, default) if piece_sgr else attrs
            self._append_flood(piece, piece_sgr, columns, attrs, piece_end, default)
            position, attrs = end, piece_end
        if self.size_bytes > self.cap_bytes:
            self._evict()

    def _append_flood(
        self, text: str, has_sgr: bool, columns: int, attrs: Cell, end_attrs: Cell, default: Cell
    ) -> None:
        """Add the lines of one piece: held in source blocks, or rendered where dense."""
        counted = counted_piece(text, has_sgr, columns)
        if counted is not None:  # the commonest floods: no line measured (counted_block.py)
            self._append_counted(text, counted, columns, attrs, end_attrs, default)
            return
        flood = measure_lines(text, has_sgr, columns)
        first, begin, total = 0, 0, len(flood.rows)  # `begin`: where line `first` starts in `text`
        dense = iter(flood.dense_lines)
        next_dense = next(dense, total)
        while first < total:
            if first == next_dense:
                end = flood.end_of(first, first + 1, begin)
                rows, attrs = render_line(flood.lines[first], attrs, columns, default)
                for row in rows:
                    self.append(row)
                first, begin, next_dense = first + 1, end, next(dense, total)
                continue
            block = self._open_block(columns, attrs, default)
            stop, end = block.take(flood, first, next_dense, begin)
            if stop == total:
                attrs = end_attrs
            elif has_sgr:
                attrs = advance_attrs(attrs, text[begin:end], default)
            rows_before, size_before = block.row_count, block.size_bytes
            block.extend(flood, first, stop, begin, end, attrs)
            self.row_count += block.row_count - rows_before
            self.rows_added += block.row_count - rows_before
            self.size_bytes += block.size_bytes - size_before
            first, begin = stop, end

    def _append_counted(
        self, text: str, counted: Counted, columns: int, attrs: Cell, end_attrs: Cell, default: Cell
    ) -> None:
        """Add the lines of one piece that counted_piece could count, in counted blocks."""
        while text:
            block = self._segments[-1] if self._segments else None
            if not (isinstance(block, CountedBlock) and block.continues(columns, attrs, default)):
                self._seal_newest()
                block = CountedBlock(columns, attrs, default)
                self._segments.append(block)
            room = block.room_chars
            cut = len(text) if len(text) <= room else text.rfind(LINE_END, 0, room) + len(LINE_END)
            if cut < len(LINE_END):  # its first line is longer than the room: it opens a new block
                cut = text.index(LINE_END) + len(LINE_END) if not block.source_chars else 0
            if cut == len(text):
                part, part_counted, part_end, text = text, counted, end_attrs, ""
            elif cut:
                part, text = text[:cut], text[cut:]
                part_counted = count_with(part, counted.kinds)
                counted = Counted(counted.lines - part_counted.lines, counted.cost - part_counted.cost,
                                  counted.kinds)
                part_end = advance_attrs(attrs, part, default) if counted.kinds else attrs
            else:
                self._seal_newest()
                self._segments.append(CountedBlock(columns, attrs, default))
                continue
            block.extend(part, part_counted, part_end)
            self.row_count += part_counted.lines
            self.rows_added += part_counted.lines
            self.size_bytes += part_counted.cost
            attrs = part_end

    def _open_block(self, columns: int, attrs: Cell, default: Cell) -> SourceBlock:
        """The newest segment if flood lines starting with `attrs` can go on in it, else a new block."""
        block = self._segments[-1] if self._segments else None
        if isinstance(block, SourceBlock) and block.continues(columns, attrs, default):
            return block
        self._seal_newest()
        block = SourceBlock(columns, attrs, default)
        self._segments.append(block)
        return block

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
                # Everything older than the suffix goes: older segments too. Its rows still
                # count as scrolled (rows_added numbers rows for good).
                self.clear()
                self.rows_added += sum(measure_lines(text[: cut + 2], has_sgr, columns).rows)
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
