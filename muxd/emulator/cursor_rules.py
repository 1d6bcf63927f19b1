"""Cursor movement as tmux does it, where pyte differs (mixed into `MuxScreen` before pyte's Screen).

- Backspace/CUB from a pending wrap (cursor past the last column) land on the last column.
- HT from the last column or a pending wrap does nothing (pyte moves a pending wrap back
  onto the last column, so the next character overwrote it instead of wrapping).
- CUU/CUD stop at the scroll region only when starting inside it (tmux's rule).
- CUP/HVP in origin mode clamp into the region instead of being ignored.
- CBT/CHT (back/forward tab), HPA (`CSI n backtick`), SCOSC/SCORC (`CSI s`/`CSI u`).
- One saved cursor (DECSC/SCOSC), restored as often as asked, instead of pyte's stack.
- DECSTBM homes the cursor whatever its parameters, `CSI r` and `CSI ; r` included.
"""

from __future__ import annotations

from typing import Any

from pyte import modes
from pyte.screens import Margins


class CursorRules:
    """tmux's cursor movement; expects to be mixed into a `pyte.Screen`."""

    cursor: Any
    columns: int
    lines: int
    margins: Any
    mode: set[int]
    tabstops: set[int]
    savepoints: list[Any]

    def _cursor_region(self) -> tuple[int, int]:
        margins = self.margins
        return (margins.top, margins.bottom) if margins else (0, self.lines - 1)

    def backspace(self) -> None:
        self.cursor_back(1)

    def cursor_back(self, count: int | None = None) -> None:
        x = min(self.cursor.x, self.columns)
        self.cursor.x = max(x - (count or 1), 0)
        if self.cursor.x >= self.columns:
            self.cursor.x = self.columns - 1

    def cursor_up(self, count: int | None = None) -> None:
        top, _bottom = self._cursor_region()
        y = self.cursor.y
        limit = top if y >= top else 0
        self.cursor.y = max(y - (count or 1), limit)

    def cursor_down(self, count: int | None = None) -> None:
        _top, bottom = self._cursor_region()
        y = self.cursor.y
        limit = bottom if y <= bottom else self.lines - 1
        self.cursor.y = min(y + (count or 1), limit)

    def cursor_position(self, line: int | None = None, column: int | None = None) -> None:
        x = (column or 1) - 1
        y = (line or 1) - 1
        if self.margins is not None and modes.DECOM in self.mode:
            top, bottom = self.margins
            y = min(max(y + top, top), bottom)
        self.cursor.x = min(max(x, 0), self.columns - 1)
        self.cursor.y = min(max(y, 0), self.lines - 1)

    def set_margins(self, top: int | None = None, bottom: int | None = None) -> None:
        """DECSTBM: rows top..bottom (1-based) scroll; a missing or 0 bound is the screen's edge.

        pyte's parser reads `CSI ; r` as 0;0, so 0 must mean the default (it does in xterm).
        A region under two rows is ignored; any other sets it and homes the cursor (to the
        region's top under DECOM, as xterm does), which pyte skips for `CSI r`."""
        last = self.lines - 1
        upper = min((top or 1) - 1, last)
        lower = min((bottom or self.lines) - 1, last)
        if upper >= lower:
            return
        self.margins = None if (upper, lower) == (0, last) else Margins(upper, lower)
        self.cursor_position()

    def tab(self) -> None:
        x = self.cursor.x
        last = self.columns - 1
        if x >= last:
            return
        next_stop = min((stop for stop in self.tabstops if stop > x), default=last)
        self.cursor.x = min(next_stop, last)  # a stop set at a pending wrap counts as none

    def cursor_forward_tab(self, count: int | None = None) -> None:
        for _ in range(min(count or 1, self.columns)):
            self.tab()

    def cursor_back_tab(self, count: int | None = None) -> None:
        x = min(self.cursor.x, self.columns - 1)
        for _ in range(min(count or 1, self.columns)):
            x = max((stop for stop in self.tabstops if stop < x), default=0)
        self.cursor.x = x

    def save_cursor(self, *_params: int) -> None:
        super().save_cursor()  # type: ignore[misc]
        del self.savepoints[:-1]

    def restore_cursor(self, *_params: int) -> None:
        if not self.savepoints:
            super().restore_cursor()  # type: ignore[misc]
            return
        savepoint = self.savepoints[-1]
        super().restore_cursor()  # type: ignore[misc]  # pops it; keep it for the next restore
        self.savepoints.append(savepoint)
        self.cursor = type(savepoint.cursor)(savepoint.cursor.x, savepoint.cursor.y, savepoint.cursor.attrs)
        self.cursor.hidden = savepoint.cursor.hidden
        self.cursor.x = min(self.cursor.x, self.columns - 1)
        self.cursor.y = min(self.cursor.y, self.lines - 1)
