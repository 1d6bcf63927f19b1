"""`compose`: a client's screen (panes at their rectangles, borders, status line) as a `Frame`.

Pure: reads the panes' emulators, writes nothing. Live pane rows come from a per-emulator
cache (pane_rows.py) and whole client rows are reused while their pane rows are unchanged, so
a frame where one row changed costs little more than that row.
"""

from __future__ import annotations

from operator import is_
from typing import NamedTuple, Sequence

from muxd.emulator import Emulator
from muxd.emulator.cell import BLANK, PADDING, Cell, Style
from muxd.emulator.widths import CHAR_WIDTHS

from muxd.emulator.cell_layout import styled_cells, text_width
from muxd.emulator.vt_row import VtRow
from .frame import Frame, FrameRow
from .layout_plan import LayoutPlan, Rect, Slot, layout_plan
from .pane_rows import live_rows, scrolled_rows
from .selection import MODE_STYLE, highlight
from .split_row import SplitRow
from .status import StatusLine, WindowTab, status_row

__all__ = ["PaneView", "StatusLine", "WindowTab", "compose"]

DEAD_MESSAGE_STYLE: Style = Cell(" ", reverse=True)[1:]  # type: ignore[assignment]
_NO_ACTIVE_PANE = -3  # never a pane index nor a layout_plan cell code


class PaneView(NamedTuple):
    """One pane as a client shows it (a tuple: each client makes one a pane a frame, and a
    frozen dataclass's fields cost a call each to set)."""

    emulator: Emulator
    x: int  # top-left cell on the client screen, 0-based
    y: int
    columns: int  # the rectangle: normally the emulator's size; clipped or padded if not
    lines: int
    active: bool = False
    scroll_offset: int = 0  # copy mode: rows scrolled back into the scrollback (0 = live)
    dead_message: str | None = None  # e.g. "Pane is dead (status 1)", drawn on the bottom row
    # Copy-mode selection: (view row, first column, column after the last) to highlight.
    highlights: tuple[tuple[int, int, int], ...] = ()
    copy_cursor: tuple[int, int] | None = None  # copy mode: its cursor (column, view row), shown
    position_shown: bool = False  # copy mode: the [offset/history] indicator even on the live screen


def compose(
    columns: int,
    lines: int,
    panes: Sequence[PaneView],
    status: StatusLine | None,
    *,
    window_size: tuple[int, int] | None = None,
) -> Frame:
    """The frame for a `columns` x `lines` client.

    The window area is every row but the last when there is a status line. Cells of the
    window (`window_size`, by default the box around the panes) not in a pane are borders;
    cells beyond it are dotted."""
    columns, lines = max(columns, 1), max(lines, 1)
    area_lines = lines - 1 if status is not None else lines
    active = next((i for i, p in enumerate(panes) if p.active), _NO_ACTIVE_PANE)
    if window_size is None and len(panes) == 1 and _fills(panes[0], columns, area_lines):
        # One live pane over the whole window area (the common screen): its rows are the
        # frame's rows, with no layout to plan and no row to assemble (and rows the native
        # formatter writes come as its text: the painter draws them whole).
        rows = list(live_rows(panes[0].emulator, vt=True))
    else:
        rects = [Rect(p.x, p.y, p.columns, p.lines) for p in panes]
        if window_size is None:
            window_size = (
                max((r.x + r.columns for r in rects), default=columns),
                max((r.y + r.lines for r in rects), default=area_lines),
            )
        plan = layout_plan(columns, area_lines, rects, active, window_size)
        rows = _assemble(plan, [_pane_source(pane) for pane in panes])
    if status is not None:
        rows.append(status_row(status, columns))

    cursor, cursor_visible, modes = (0, 0), False, frozenset[int]()
    if active != _NO_ACTIVE_PANE:
        pane = panes[active]
        emulator = pane.emulator
        modes = emulator.private_modes
        x, y = pane.copy_cursor if pane.copy_cursor is not None else emulator.cursor
        screen_x, screen_y = pane.x + x, pane.y + y
        if (
            x < min(pane.columns, emulator.columns)
            and y < min(pane.lines, emulator.lines)
            and 0 <= screen_x < columns
            and 0 <= screen_y < area_lines
        ):
            cursor = (screen_x, screen_y)
            cursor_visible = pane.copy_cursor is not None or (emulator.cursor_visible and pane.scroll_offset <= 0)
    if status is not None and status.message is not None and status.message_cursor is not None:
        cursor = (min(max(status.message_cursor, 0), columns - 1), lines - 1)
        cursor_visible = True
    return Frame(columns, lines, tuple(rows), cursor, cursor_visible, modes)


def _fills(pane: PaneView, columns: int, lines: int) -> bool:
    """Whether `pane` is live (nothing drawn over it) and exactly covers a `columns` x `lines`
    area at its top left, as its emulator's size."""
    emulator = pane.emulator
    return (pane.x == 0 and pane.y == 0 and pane.columns == columns == emulator.columns
            and pane.lines == lines == emulator.lines and pane.scroll_offset <= 0 and pane.dead_message is None
            and not pane.highlights and not pane.position_shown)


def _pane_source(pane: PaneView) -> list[FrameRow]:
    """The pane's rows as shown: live or scrolled back, with the selection, the copy-mode
    indicator and the dead-pane message drawn over them."""
    emulator = pane.emulator
    if pane.scroll_offset <= 0 and pane.dead_message is None and not pane.highlights and not pane.position_shown:
        # Shown at its full width, rows the native formatter writes come as its text (a
        # SplitRow keeps them whole); cut by the client's edge, as cells.
        return live_rows(emulator, vt=pane.columns == emulator.columns)
    rows = list(scrolled_rows(emulator, pane.scroll_offset))
    for y, start, stop in pane.highlights:
        if 0 <= y < len(rows):
            rows[y] = highlight(rows[y], start, stop)
    width = min(pane.columns, emulator.columns)
    if (pane.scroll_offset > 0 or pane.position_shown) and rows:
        history = emulator.history_size
        label = f"[{min(max(pane.scroll_offset, 0), history)}/{history}]"
        rows[0] = _overlay_right(rows[0], label, width)
    if pane.dead_message is not None:
        bottom = min(pane.lines, emulator.lines) - 1
        if bottom >= 0:
            message = tuple(styled_cells([(pane.dead_message, DEAD_MESSAGE_STYLE)], width))
            rows[bottom] = message + rows[bottom][width:]
    return rows


def _overlay_right(row: FrameRow, label: str, width: int) -> FrameRow:
    """`row` with `label` drawn right-aligned within its first `width` cells."""
    label_cells = min(text_width(label), width)
    start = width - label_cells
    cells = list(row[:width])
    if start > 0 and cells[start].data == PADDING:  # a wide character cut in half
        cells[start - 1] = cells[start - 1]._replace(data=" ")
    cells[start:] = styled_cells([(label, MODE_STYLE)], label_cells)
    return tuple(cells) + row[width:]


def _assemble(plan: LayoutPlan, sources: list[list[FrameRow]]) -> list[FrameRow]:
    rows: list[FrameRow] = []
    memo = plan.memo
    for y, slots in enumerate(plan.slots):
        used = [
            sources[slot.pane][slot.pane_y] if slot.pane_y < len(sources[slot.pane]) else ()
            for slot in slots
        ]
        if len(slots) == 1 and len(plan.rows[y]) == 1:
            slot, source_row = slots[0], used[0]
            if slot.pane_x == 0 and len(source_row) == slot.width:
                rows.append(source_row)  # a pane row spanning the client: itself
                continue
        remembered = memo[y]
        if remembered is not None and all(map(is_, remembered[0], used)):
            rows.append(remembered[1])
            continue
        row = _build_row(plan.rows[y], iter(used))
        memo[y] = (used, row)
        rows.append(row)
    return rows


def _build_row(pieces: tuple[FrameRow | Slot, ...], used: object) -> FrameRow:
    parts: list[FrameRow] = []
    whole_vt_rows = False
    for piece in pieces:
        if type(piece) is Slot:
            source = next(used)  # type: ignore[call-overload]
            if type(source) is VtRow and piece.pane_x == 0 and len(source) == piece.width:
                parts.append(source)  # drawn from its text, at its column (paint.py)
                whole_vt_rows = True
            else:
                parts.append(_slot_cells(source, piece.pane_x, piece.width))
        else:
            parts.append(piece)  # type: ignore[arg-type]
    if len(parts) == 1:
        return parts[0]
    if whole_vt_rows:
        return SplitRow(tuple(parts))
    row: FrameRow = ()
    for part in parts:
        row += part
    return row


def _slot_cells(source: FrameRow, start: int, width: int) -> FrameRow:
    """Cells start..start+width of a pane row, blank-padded, wide characters cut by the edge
    drawn as spaces."""
    if type(source) is VtRow:
        source = source.cells  # (a pane row cut by the client's edge; never in a VtRow's place)
    if start == 0 and len(source) == width:
        cells = source
    else:
        cells = source[start : start + width]
        if len(cells) < width:
            cells += (BLANK,) * (width - len(cells))
    first, last = cells[0], cells[-1]
    if first.data == PADDING:
        cells = (first._replace(data=" "),) + cells[1:]
    if last.data and CHAR_WIDTHS[last.data[0]] == 2:
        cells = cells[:-1] + (last._replace(data=" "),)
    return cells
