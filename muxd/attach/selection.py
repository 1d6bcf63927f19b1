"""What a copy-mode selection holds: its text as tmux copies it, and its cells highlighted."""

from __future__ import annotations

from typing import Protocol

from muxd.copy_geometry import PaneGeometry, Point, selected_columns
from muxd.emulator import Emulator
from muxd.emulator.cell import Cell, Style

from muxd.emulator.cell_layout import row_cells
from .frame import FrameRow

# tmux's mode-style (bg=yellow, fg=black; pyte calls ANSI yellow "brown"): selected cells and
# the copy-mode position indicator.
MODE_STYLE: Style = Cell(" ", fg="black", bg="brown")[1:]  # type: ignore[assignment]


class CopyView(Protocol):
    """What drawing copy mode reads of it (the daemon's CopyMode): how far back the view is
    scrolled and where its cursor is."""

    offset: int
    cursor: Point | None


def selection_text(emulator: Emulator, selection: tuple[Point, Point], *, max_chars: int) -> str:
    """The selected text: rows joined by line feeds (none where a row soft-wrapped into the
    next), trailing blanks of each row dropped, at most `max_chars` characters."""
    (first_row, _), (last_row, _) = selection
    top = emulator.rows_scrolled
    start, stop = emulator.span(first_row - top, last_row - top)  # rows evicted since: skipped
    stop = min(stop, start + max_chars)  # every row gives at least a line feed
    columns = emulator.columns
    pieces: list[str] = []
    size = 0
    for index, row in enumerate(emulator.rows(start, stop)):
        number = top + start + index
        span = selected_columns(selection, number, columns)
        if span is None:
            continue
        text = "".join(cell.data for cell in row_cells(row, columns)[span[0]:span[1]])
        if not (row.wrapped and span[1] == columns and number < last_row):
            text = text.rstrip(" ") + "\n"
        pieces.append(text)
        size += len(text)
        if size > max_chars:
            break
    return "".join(pieces).removesuffix("\n")[:max_chars]


def highlight(row: FrameRow, start: int, stop: int) -> FrameRow:
    """`row` with cells [start, stop) in the selection style (their characters kept)."""
    marked = tuple(Cell(cell.data, *MODE_STYLE) for cell in row[start:stop])
    return row[:start] + marked + row[stop:]


def view_top(emulator: Emulator, offset: int) -> int:
    """The running number of the first row of a view scrolled back `offset` rows."""
    return emulator.rows_scrolled - min(max(offset, 0), emulator.history_size)


def point_at(emulator: Emulator, offset: int, column: int, row: int) -> Point:
    """The selection point under cell (column, row) of a pane's view scrolled back `offset` rows."""
    column = min(max(column, 0), emulator.columns - 1)
    row = min(max(row, 0), emulator.lines - 1)
    return view_top(emulator, offset) + row, column


def highlight_spans(emulator: Emulator, selection: tuple[Point, Point], offset: int,
                    lines: int) -> tuple[tuple[int, int, int], ...]:
    """(view row, first column, column after the last) of the selection in the view."""
    top = view_top(emulator, offset)
    (first_row, _), (last_row, _) = selection
    spans = []
    for view_row in range(max(0, first_row - top), min(lines, last_row - top + 1)):
        span = selected_columns(selection, top + view_row, emulator.columns)
        if span is not None:
            spans.append((view_row, *span))
    return tuple(spans)


def pane_geometry(emulator: Emulator) -> PaneGeometry:
    return PaneGeometry(top=emulator.rows_scrolled, history=emulator.history_size,
                        lines=emulator.lines, columns=emulator.columns,
                        text_of=lambda number: cell_text(emulator, number),
                        rows_text=lambda first, last: rows_text(emulator, first, last))


def rows_text(emulator: Emulator, first: int, last: int) -> list[str]:
    """Rows first..last (running numbering, kept rows only) as plain text."""
    top = emulator.rows_scrolled
    return emulator.capture(first - top, last - top).split("\n")[:-1]


def cell_text(emulator: Emulator, number: int) -> str:
    """Row `number` (running numbering) as one character per cell, so that a string index is a
    column: a wide character's right half repeats it, a combining mark is dropped. "" for a
    row no longer kept."""
    top = emulator.rows_scrolled
    if not top - emulator.history_size <= number < top + emulator.lines:
        return ""
    chars: list[str] = []
    for cell in row_cells(emulator.rows(number - top, number - top)[0], emulator.columns):
        chars.append(cell.data[:1] or (chars[-1] if chars else " "))
    return "".join(chars).rstrip(" ")


def copy_cursor_at(emulator: Emulator, copy: CopyView, lines: int) -> tuple[int, int] | None:
    """(column, view row) of the copy-mode cursor, if it is on the view."""
    if copy.cursor is None:
        return None
    row, column = copy.cursor
    view_row = row - view_top(emulator, copy.offset)
    return (column, view_row) if 0 <= view_row < lines else None
