"""Where each client cell comes from: a pane's row, a border, or the dotted area outside the window.

Built once per layout (pane rectangles, active pane, client and window size) and cached, so a
frame only has to fetch pane rows and glue them to precomputed border pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from muxd.emulator.cell import BLANK, Cell

from .frame import FrameRow

OUTSIDE_CELL = Cell("·")  # client area beyond the window (a smaller client sets its size)
_PLAN_CACHE_MAX_ENTRIES = 32
_OUTSIDE, _BORDER = -2, -1

# (up, down, left, right) border neighbours -> box-drawing character.
_BOX = {
    (False, False, False, False): "│",
    (True, False, False, False): "│",
    (False, True, False, False): "│",
    (True, True, False, False): "│",
    (False, False, True, False): "─",
    (False, False, False, True): "─",
    (False, False, True, True): "─",
    (True, True, True, True): "┼",
    (True, True, False, True): "├",
    (True, True, True, False): "┤",
    (False, True, True, True): "┬",
    (True, False, True, True): "┴",
    (False, True, False, True): "┌",
    (False, True, True, False): "┐",
    (True, False, False, True): "└",
    (True, False, True, False): "┘",
}
_BORDER_CELLS = {char: Cell(char) for char in _BOX.values()}
_ACTIVE_BORDER_CELLS = {char: Cell(char, fg="green") for char in _BOX.values()}


class Rect(NamedTuple):
    x: int
    y: int
    columns: int
    lines: int


class Slot(NamedTuple):
    """Cells `pane_x`..`pane_x + width` of row `pane_y` of pane number `pane`."""

    pane: int
    pane_y: int
    pane_x: int
    width: int


Piece = FrameRow | Slot  # a run of fixed cells, or a run taken from a pane


@dataclass(frozen=True, slots=True)
class LayoutPlan:
    rows: tuple[tuple[Piece, ...], ...]  # per window-area row, left to right
    slots: tuple[tuple[Slot, ...], ...]  # per row: just its Slots, in order
    # Per row: (the pane rows it was built from, the row), so compose can reuse a row whose
    # pane rows are the same objects as last time.
    memo: list[tuple[list[FrameRow], FrameRow] | None] = field(default_factory=list)


_cache: dict[tuple[object, ...], LayoutPlan] = {}


def layout_plan(
    columns: int, lines: int, rects: Sequence[Rect], active: int, window: tuple[int, int]
) -> LayoutPlan:
    """The plan for a `columns` x `lines` area with panes at `rects` (memoised)."""
    key = (columns, lines, tuple(rects), active, window)
    plan = _cache.get(key)
    if plan is None:
        if len(_cache) >= _PLAN_CACHE_MAX_ENTRIES:
            _cache.clear()
        plan = _cache[key] = _build(columns, lines, rects, active, window)
    return plan


def _build(columns: int, lines: int, rects: Sequence[Rect], active: int, window: tuple[int, int]) -> LayoutPlan:
    window_columns, window_lines = min(window[0], columns), min(window[1], lines)
    owner = [
        [_BORDER if x < window_columns and y < window_lines else _OUTSIDE for x in range(columns)]
        for y in range(lines)
    ]
    for index, rect in enumerate(rects):
        for y in range(max(rect.y, 0), min(rect.y + rect.lines, lines)):
            row = owner[y]
            for x in range(max(rect.x, 0), min(rect.x + rect.columns, columns)):
                if row[x] < 0:
                    row[x] = index

    def at(x: int, y: int) -> int:
        return owner[y][x] if 0 <= x < columns and 0 <= y < lines else _OUTSIDE

    # A border cell is drawn only next to a pane (8 neighbours); gaps far from panes stay blank.
    drawn = [
        [
            owner[y][x] == _BORDER
            and any(at(x + dx, y + dy) >= 0 for dx in (-1, 0, 1) for dy in (-1, 0, 1))
            for x in range(columns)
        ]
        for y in range(lines)
    ]

    def is_drawn(x: int, y: int) -> bool:
        return 0 <= x < columns and 0 <= y < lines and drawn[y][x]

    plan_rows: list[tuple[Piece, ...]] = []
    for y in range(lines):
        pieces: list[Piece] = []
        fixed: list[Cell] = []
        x = 0
        while x < columns:
            who = owner[y][x]
            if who >= 0:
                start = x
                while x < columns and owner[y][x] == who:
                    x += 1
                if fixed:
                    pieces.append(tuple(fixed))
                    fixed = []
                rect = rects[who]
                pieces.append(Slot(who, y - rect.y, start - rect.x, x - start))
                continue
            if who == _OUTSIDE:
                fixed.append(OUTSIDE_CELL)
            elif not drawn[y][x]:
                fixed.append(BLANK)
            else:
                char = _BOX[(is_drawn(x, y - 1), is_drawn(x, y + 1), is_drawn(x - 1, y), is_drawn(x + 1, y))]
                near_active = any(at(x + dx, y + dy) == active for dx in (-1, 0, 1) for dy in (-1, 0, 1))
                fixed.append((_ACTIVE_BORDER_CELLS if near_active else _BORDER_CELLS)[char])
            x += 1
        if fixed:
            pieces.append(tuple(fixed))
        plan_rows.append(tuple(pieces))
    slots = tuple(tuple(piece for piece in pieces if type(piece) is Slot) for pieces in plan_rows)
    return LayoutPlan(tuple(plan_rows), slots, [None] * len(plan_rows))
