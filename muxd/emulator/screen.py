"""`MuxScreen`: pyte's `Screen` with what a multiplexer pane needs (hooks work by subclassing).

Adds: answers to device queries through `reply`; the alternate screen (private modes 1049,
1047, 47); title and bell; rows scrolled off the main screen go to a byte-capped
`Scrollback` (as in tmux 3.3a: also the top row of any scroll region, and the used rows of
a cleared screen, "scroll-on-clear"); per-row soft-wrap flags, forgotten like tmux's when a
row is cleared; SU/SD/REP; DCS/SOS/PM/APC strings swallowed; DEC line drawing
(charsets.py); tmux's rules for wide characters (drawing.py), cursor movement and scroll
regions (cursor_rules.py), erasing (cells get the background colour only) and resizing.
No event handler ever raises (_guard.py).
Cells are `Cell`s (pyte's `Char` plus dim/hidden/overline).
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from typing import Any, Callable

import pyte
from pyte import modes
from pyte.screens import Cursor, StaticDefaultDict

from ._guard import guard_events
from .cell import BLANK, REVERSE_BLANK, Cell
from .charsets import CharsetShifts
from .cursor_rules import CursorRules
from .drawing import CHAR_CACHE_MAX_STYLES, CharCache, draw_fast, draw_reference
from .parser import ExtendedStream
from .rows import Row, row_from_cells, row_text
from .scrollback import Scrollback
from .sgr import apply_sgr
from .tab_stops import default_tab_stops

ALTERNATE_SCREEN_MODES = frozenset({47, 1047, 1049})
ALTERNATE_SCREEN_WITH_CURSOR = 1049
DECCOLM_PRIVATE = 3  # 80/132 columns: tmux clears the screen instead of resizing; so do we
KEYPAD_APPLICATION_MODE = 66 << 5  # DECNKM, also what ESC = / ESC > (DECKPAM/DECKPNM) set
REPEAT_MAX_CHARS = 65535  # REP count limit, so `CSI 9999999 b` cannot stall the pane
DEVICE_ATTRIBUTES_REPLY = "\x1b[?1;2c"  # VT100 with advanced video, as tmux answers
DEVICE_OK_REPLY = "\x1b[0n"
_STATUS_REPORT, _CURSOR_REPORT = 5, 6

Buffer = defaultdict  # row number -> ScreenLine
TITLE_MAX_CHARS = 1024  # an OSC never ended may carry all later output: its title is cut to this
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _title(param: str) -> str:
    """A title as an OSC set it: without controls (tmux drops them), at most TITLE_MAX_CHARS."""
    return _CONTROLS.sub("", param)[:TITLE_MAX_CHARS]


class ScreenLine(StaticDefaultDict[int, Cell]):
    """A pyte row (column -> Cell) that also knows whether it soft-wrapped into the next."""

    wrapped = False


class MuxScreen(CharsetShifts, CursorRules, pyte.Screen):
    """A pane's screen. `scrollback` receives rows leaving the top of the main screen."""

    def __init__(
        self,
        columns: int,
        lines: int,
        scrollback: Scrollback,
        reply: Callable[[bytes], None] | None = None,
        fast_draw: bool = True,
    ) -> None:
        self.hook_errors = 0
        self.in_string = False  # inside a DCS/SOS/PM/APC string: swallowed up to ST
        self.bell_count = 0
        self.last_char = ""  # the last character drawn, for REP
        self.scrollback = scrollback
        self.alternate = False
        self._reply = reply
        self._saved_main: tuple[Buffer, Cursor] | None = None
        self._draw = draw_fast if fast_draw else draw_reference
        self._char_caches: dict[Cell, CharCache] = {}
        self._last_cache: CharCache | None = None
        super().__init__(columns, lines)

    # -- plumbing ---------------------------------------------------------------------

    @property
    def default_char(self) -> Cell:  # type: ignore[override]
        return REVERSE_BLANK if modes.DECSCNM in self.mode else BLANK

    def _new_buffer(self) -> Buffer:
        return defaultdict(lambda: ScreenLine(self.default_char))

    def char_cache(self, attrs: Cell) -> CharCache:
        """The flyweight `Cell`s for `attrs`, one per character."""
        cache = self._last_cache
        if cache is not None and cache.attrs is attrs:
            return cache
        cache = self._char_caches.get(attrs)
        if cache is None:
            if len(self._char_caches) >= CHAR_CACHE_MAX_STYLES:
                self._char_caches.clear()
            cache = self._char_caches[attrs] = CharCache(attrs)
        self._last_cache = cache
        return cache

    def write_process_input(self, data: str) -> None:
        if self._reply is not None:
            self._reply(data.encode("utf-8"))

    def visible_text(self, y: int) -> str:
        """The text of visible row `y` (as `visible_row(y).text`, without building styles)."""
        line = self.buffer.get(y)
        return row_text(line, self.columns) if line else ""

    def visible_row(self, y: int) -> Row:
        """The compact form of visible row `y`."""
        line = self.buffer.get(y)
        if line is None:
            return row_from_cells({}, self.columns, False)
        return row_from_cells(line, self.columns, line.wrapped)

    def _erase_cell(self) -> Cell:
        """What erased cells become: blank, with only the cursor's background (as in tmux)."""
        bg = self.cursor.attrs.bg
        blank = self.default_char
        return blank if bg == blank.bg else blank._replace(bg=bg)

    # -- events -----------------------------------------------------------------------

    def draw(self, data: str) -> None:
        self._draw(self, data)

    def start_string(self) -> None:
        self.in_string = True

    def end_string(self) -> None:
        self.in_string = False

    def repeat_last_character(self, count: int | None = None) -> None:
        if self.last_char:
            self.draw(self.last_char * min(count or 1, REPEAT_MAX_CHARS))

    def set_title(self, param: str) -> None:
        super().set_title(_title(param))

    def set_icon_name(self, param: str) -> None:
        super().set_icon_name(_title(param))

    def alignment_display(self) -> None:
        """DECALN (ESC # 8) as tmux does it: every cell an 'E' in the default style, the margins
        reset, the cursor home. Each row is one dict update: pyte's fill, cell by cell, took ~4 ms
        a 120x40 screen, so a program repeating ESC # 8 kept its pane seconds behind."""
        filled = dict.fromkeys(range(self.columns), BLANK._replace(data="E"))
        for y in range(self.lines):
            line = self.buffer[y]
            line.clear()
            line.update(filled)
            line.wrapped = False
        self.dirty.update(range(self.lines))
        self.margins = None
        self.cursor_position()

    def bell(self, *args: Any) -> None:
        self.bell_count += 1

    def keypad_application(self) -> None:
        self.mode.add(KEYPAD_APPLICATION_MODE)

    def keypad_numeric(self) -> None:
        self.mode.discard(KEYPAD_APPLICATION_MODE)

    def reset(self) -> None:
        # RIS leaves the alternate screen for a fresh main one; scrollback stays (as in tmux).
        if not self.alternate and hasattr(self, "buffer"):
            self._clear_into_scrollback()
        self.alternate = False
        self._saved_main = None
        self.savepoints.clear()  # a DECRC after RIS homes the cursor, as in tmux and xterm
        super().reset()
        self.buffer = self._new_buffer()
        self.cursor.attrs = BLANK
        self.last_char = ""

    def _scroll_region_up(self, top: int, bottom: int) -> None:
        """Scroll rows top..bottom up by one; on the main screen the top row goes to scrollback.

        tmux keeps the top row of any scroll region (not only the full screen) in history.
        """
        buffer = self.buffer
        if not self.alternate:
            self.scrollback.append(self.visible_row(top))
        for y in range(top, bottom):
            line = buffer.get(y + 1)
            if line is None:
                buffer.pop(y, None)
            else:
                buffer[y] = line
        buffer.pop(bottom, None)
        self.dirty.update(range(self.lines))

    def _scroll_region_down(self, top: int, bottom: int) -> None:
        buffer = self.buffer
        for y in range(bottom, top, -1):
            line = buffer.get(y - 1)
            if line is None:
                buffer.pop(y, None)
            else:
                buffer[y] = line
        buffer.pop(top, None)
        self.dirty.update(range(self.lines))

    def _region(self) -> tuple[int, int]:
        margins = self.margins
        return (margins.top, margins.bottom) if margins else (0, self.lines - 1)

    def index(self) -> None:
        top, bottom = self._region()
        y = self.cursor.y
        if y == bottom:
            self._scroll_region_up(top, bottom)
        elif y < self.lines - 1:  # below the region the cursor goes on to the last row
            self.cursor.y = y + 1

    def reverse_index(self) -> None:
        top, bottom = self._region()
        y = self.cursor.y
        if y == top:
            self._scroll_region_down(top, bottom)
        elif y > 0:
            self.cursor.y = y - 1

    def scroll_up(self, count: int | None = None) -> None:
        top, bottom = self._region()
        for _ in range(min(count or 1, bottom - top + 1)):
            self._scroll_region_up(top, bottom)

    def scroll_down(self, count: int | None = None) -> None:
        top, bottom = self._region()
        for _ in range(min(count or 1, bottom - top + 1)):
            self._scroll_region_down(top, bottom)

    def select_graphic_rendition(self, *attrs: int, private: bool = False) -> None:
        if private:
            return  # CSI ? Pm m is xterm's modifier-key query, not SGR
        self.cursor.attrs = apply_sgr(self.cursor.attrs, attrs, self.default_char)

    def report_device_attributes(self, mode: int = 0, **kwargs: Any) -> None:
        if mode == 0 and not kwargs.get("private"):
            self.write_process_input(DEVICE_ATTRIBUTES_REPLY)

    def report_device_status(self, mode: int = 0, **kwargs: Any) -> None:
        if kwargs.get("private"):
            return
        if mode == _STATUS_REPORT:
            self.write_process_input(DEVICE_OK_REPLY)
        elif mode == _CURSOR_REPORT:
            x = min(self.cursor.x, self.columns - 1) + 1
            y = self.cursor.y + 1
            if modes.DECOM in self.mode and self.margins is not None:
                y -= self.margins.top
            self.write_process_input(f"\x1b[{y};{x}R")

    def set_mode(self, *modes_: int, **kwargs: Any) -> None:
        modes_ = self._private_mode_effects(modes_, kwargs.get("private", False), enable=True)
        super().set_mode(*modes_, **kwargs)

    def reset_mode(self, *modes_: int, **kwargs: Any) -> None:
        modes_ = self._private_mode_effects(modes_, kwargs.get("private", False), enable=False)
        super().reset_mode(*modes_, **kwargs)

    def _private_mode_effects(self, modes_: tuple[int, ...], private: bool, enable: bool) -> tuple[int, ...]:
        """Handle the private modes pyte gets wrong; return the ones left for pyte."""
        if not private:
            return modes_
        for mode in modes_:
            if mode in ALTERNATE_SCREEN_MODES:
                if enable:
                    self._enter_alternate()
                else:
                    self._leave_alternate(restore_cursor=mode == ALTERNATE_SCREEN_WITH_CURSOR)
            elif mode == DECCOLM_PRIVATE:
                self.erase_in_display(2)
                self.cursor_position()
        return tuple(m for m in modes_ if m != DECCOLM_PRIVATE and m not in ALTERNATE_SCREEN_MODES)

    def _enter_alternate(self) -> None:
        if self.alternate:
            return
        self._saved_main = (self.buffer, copy.copy(self.cursor))
        self.buffer = self._new_buffer()
        self.alternate = True
        self.dirty.update(range(self.lines))

    def _leave_alternate(self, restore_cursor: bool) -> None:
        if not self.alternate or self._saved_main is None:
            return
        self.buffer, saved_cursor = self._saved_main
        self._saved_main = None
        self.alternate = False
        if restore_cursor:
            self.cursor = saved_cursor
            self.cursor.x = min(self.cursor.x, self.columns)
            self.cursor.y = min(self.cursor.y, self.lines - 1)
        self.dirty.update(range(self.lines))

    def _unwrap_cleared_rows(self, start: int, stop: int) -> None:
        """Rows start..stop-1 were cleared across their width: like tmux, they and the row
        above (the newest scrollback row, above row 0) no longer continue onto the next row."""
        buffer = self.buffer
        if start == 0 and not self.alternate:
            self.scrollback.unwrap_newest()
        for y in range(max(start - 1, 0), stop):
            line = buffer.get(y)
            if line is not None:
                line.wrapped = False

    def erase_characters(self, count: int | None = None) -> None:
        x = self.cursor.x
        stop = min(x + (count or 1), self.columns)
        self.buffer[self.cursor.y].update(dict.fromkeys(range(x, stop), self._erase_cell()))
        self.dirty.add(self.cursor.y)
        if x == 0 and stop == self.columns:
            self._unwrap_cleared_rows(self.cursor.y, self.cursor.y + 1)

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        x, columns = self.cursor.x, self.columns
        if how == 0:
            start, stop = x, columns
        elif how == 1:
            start, stop = 0, min(x + 1, columns)
        elif how == 2:
            start, stop = 0, columns
        else:
            return
        self.dirty.add(self.cursor.y)
        line = self.buffer[self.cursor.y]
        cell = self._erase_cell()
        if cell is not line.default:
            line.update(dict.fromkeys(range(start, stop), cell))
        elif start == 0 and stop == columns:
            # Missing cells read as the default blank, as tmux keeps no cells for an erased row:
            # the row is as cheap to erase as to read afterwards.
            line.clear()
        elif line:
            # Cells past the last one stored are blank already: only those up to it need erasing
            # (a TUI's erase-to-end after each line of text would otherwise fill the row).
            last = max(line)
            if last >= start:
                line.update(dict.fromkeys(range(start, min(stop, last + 1)), cell))
        if start == 0 and stop == columns:
            self._unwrap_cleared_rows(self.cursor.y, self.cursor.y + 1)

    def _clear_into_scrollback(self) -> None:
        """tmux's scroll-on-clear: rows down to the last one in use go to scrollback."""
        buffer = self.buffer
        used = [y for y, line in buffer.items() if y < self.lines and any(c != BLANK for c in line.values())]
        for y in range(max(used) + 1 if used else 0):
            self.scrollback.append(self.visible_row(y))

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        if how == 3:  # xterm/tmux: erase the saved lines, not the screen
            self.scrollback.clear()
            return
        whole_screen = how == 2 or (how == 0 and self.cursor.x == 0 and self.cursor.y == 0)
        if whole_screen and not self.alternate:
            self._clear_into_scrollback()
        if how == 0:
            rows = range(self.cursor.y + 1, self.lines)
        elif how == 1:
            rows = range(self.cursor.y)
        elif how == 2:
            rows = range(self.lines)
        else:
            return
        self.dirty.update(rows)
        blank = self._erase_cell()
        for y in rows:
            line = self.buffer[y]
            if blank is line.default:
                line.clear()
            else:
                line.update(dict.fromkeys(line, blank))
        if rows:
            self._unwrap_cleared_rows(rows.start, rows.stop)
        if how == 0 or how == 1:
            self.erase_in_line(how)

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        """Resize like tmux: rows cut from the top of the main screen go to scrollback."""
        lines = lines or self.lines
        columns = columns or self.columns
        if lines == self.lines and columns == self.columns:
            return
        if self._saved_main is not None:
            main_buffer, main_cursor = self._saved_main
            self._fit(main_buffer, main_cursor, lines, columns, to_scrollback=True)
        self._fit(self.buffer, self.cursor, lines, columns, to_scrollback=not self.alternate)
        if columns != self.columns:  # tmux resets tab stops whenever the width changes
            self.tabstops = set(default_tab_stops(columns))
        self.lines, self.columns = lines, columns
        self.margins = None
        self.dirty.update(range(lines))

    def _fit(self, buffer: Buffer, cursor: Cursor, lines: int, columns: int, to_scrollback: bool) -> None:
        excess = self.lines - lines
        if excess > 0:
            # Blank rows below the cursor go first, then rows from the top (tmux does this too).
            for y in range(self.lines - 1, cursor.y, -1):
                if excess == 0 or buffer.get(y):
                    break
                buffer.pop(y, None)
                excess -= 1
            if excess > 0:
                if to_scrollback:
                    for y in range(excess):
                        line = buffer.get(y)
                        wrapped = line.wrapped if line is not None else False
                        self.scrollback.append(row_from_cells(line or {}, self.columns, wrapped))
                kept = {y - excess: buffer[y] for y in range(excess, self.lines) if y in buffer}
                buffer.clear()
                buffer.update(kept)
                cursor.y -= excess
            for y in [y for y in buffer if y >= lines]:
                del buffer[y]
        if columns < self.columns:
            for line in buffer.values():
                for x in [x for x in line if x >= columns]:
                    del line[x]
        cursor.x = min(max(cursor.x, 0), columns)
        cursor.y = min(max(cursor.y, 0), lines - 1)


guard_events(MuxScreen, ExtendedStream.events)
