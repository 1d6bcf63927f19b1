"""`NativeHistory`: rows leaving libghostty-vt's screen move into muxd's compact scrollback.

libghostty-vt keeps whole cell pages (~1 KB a 120-column row, against ~40-150 bytes a row
in `Scrollback`) and its own cap evicts rows without telling anyone. So its scrollback is
kept short: rows that scroll into it are copied out as VT text by the native formatter
into the same byte-capped `Scrollback` the pyte emulator uses, then erased natively (an ED 3
written while the parser is between sequences). Output is written in pieces small enough
that the native scrollback never reaches its cap between two drains (`_room_for`).

It also gives the native core tmux's history semantics where they differ: a screen cleared
on the main screen (ED 2, ED 0 from the home position, RIS) goes to history first (tmux's
scroll-on-clear), and ED 3 erases muxd's history too.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import Callable

from .ghostty_ffi import ffi, init_sized, lib

from .cell import BLANK
from .ghostty_format import ACTIVE, HISTORY, NativeFormatter
from .rows import EMPTY_ROW
from .scrollback import Scrollback
from .source_block import advance_attrs, measure_lines, render_line

# The native scrollback's own cap: far above what it ever holds between drains, so it never
# evicts; rows per cap at a width are estimated from ~8 bytes a cell plus a row header.
NATIVE_CAP_BYTES = 8 * 1024 * 1024
_NATIVE_ROW_BYTES_PER_CELL = 8
_NATIVE_ROW_HEADER_BYTES = 64
# Rows are drained once this many wait natively: drains cost ~50 us, so not after each read,
# and few enough rows that a drain never makes one emulation slice many times dearer than the
# next (daemon/panes/emulation.py sizes slices by their mean cost).
DRAIN_ROWS = 64

# Sequences that change history: ED (0, 2, 3), RIS, entering the alternate screen; and
# scroll-ups (SU), which push up to a screenful at once. DECALN (ESC # 8) too, for its hook.
_CARRY_BYTES = 16  # longer than any event
_DECCOLM_NARROW, _DECCOLM_WIDE = 80, 132  # the widths DECCOLM (mode 3) switches between
# Every byte but those that may scroll a row (LF, VT, FF, ESC): deleted, the rest are counted.
_NOT_ROW_BREAKS = bytes(set(range(256)) - set(b"\n\x0b\x0c\x1b"))
# The CSI forms share their "[" and take their digits possessively: an ESC that starts no event
# (a TUI's every SGR) fails at once, with no backtracking (a third of this scan's cost).
_EVENTS = re.compile(rb"\x1b(?:\[(?:([023]?+)J|(\d*+)S|\?(?:1049|1047|47)h)|c|(#8))")
# The formatter writes styles as SGR; muxd's rows keep no underline style and no underline
# colour, and palette colours 0-15 read back as the named colours (ghostty keeps one index
# for `31` and `38;5;1`; programs write the former).
_UNDERLINE_STYLE = re.compile(r"\x1b\[4:([0-5])m")
_COLON_SGR = re.compile(r"\x1b\[[0-9;]*:[0-9;:]*m")
_LOW_PALETTE = re.compile(r"\x1b\[[34]8;5;(?:1[0-5]|[0-9])m")
_NOT_SGR = re.compile(r"\x1b(?!\[[0-9;]*m)[^a-zA-Z]*[a-zA-Z]?")



def _underline(match: re.Match[str]) -> str:
    return "\x1b[24m" if match.group(1) == "0" else "\x1b[4m"


def _named(layer: str, index: str) -> str:
    number = int(index)
    base = (30 if layer == "3" else 40) + (60 if number >= 8 else 0)
    return f"\x1b[{base + number % 8}m"


# Each low palette sequence and its named colour: a row of the same colours repeats them, so
# each one present is replaced in one pass rather than a Python call a match.
_NAMED = {f"\x1b[{layer}8;5;{index}m": _named(layer, str(index)) for layer in "34" for index in range(16)}


def plain_sgr(text: str) -> str:
    """The formatter's VT text with only the SGR muxd's rows keep (see the patterns above)."""
    if "\x1b" not in text:
        return text
    return _NOT_SGR.sub("", muxd_sgr(text))


def muxd_sgr(text: str) -> str:
    """The formatter's SGR in `text` as muxd's rows keep it (one underline, named colours
    0-15); other sequences are left as they are."""
    if ":" in text:
        text = _COLON_SGR.sub("", _UNDERLINE_STYLE.sub(_underline, text))
    if "8;5;" in text:
        for sequence in set(_LOW_PALETTE.findall(text)):
            text = text.replace(sequence, _NAMED[sequence])
    return text


def _one_row_each(lines: str, rows: int) -> bool:
    """Whether the `rows` native rows formatted as `lines` (unwrapped) lay out one row a line in
    muxd too: as many lines as rows (none soft-wrapped, none left out), and ASCII with no tab
    (each character one cell, as in ghostty, so a line that fit its row fits muxd's)."""
    return lines.count("\r\n") + 1 == rows and lines.isascii() and "\t" not in lines


def scroll_rows(match: re.Match[bytes], lines: int) -> int:
    """Rows an SU event can push into history (0 for other events)."""
    count = match.group(2)
    if count is None:
        return 0
    return min(max(int(count or 1), 1), lines)


# A GhosttyRow's flags as the library packs them (after the offset of the row's cells): checked
# once below; where they are not so, rows are read through the library's getter.
_ROW_BITS = {lib.GHOSTTY_ROW_DATA_WRAP: 1 << 32, lib.GHOSTTY_ROW_DATA_GRAPHEME: 1 << 34}
_WRAP_OR_GRAPHEME = sum(_ROW_BITS.values())


def _row_bits_match() -> bool:
    """True when the library reads each of _ROW_BITS' flags from its bit alone."""
    flag = ffi.new("bool*")
    return all(not lib.ghostty_row_get(raw, key, flag) and flag[0] == set_
               for key, bit in _ROW_BITS.items()
               for raw, set_ in ((bit, True), (0, False), ((1 << 64) - 1 - bit, False)))


_ROW_BITS_MATCH = _row_bits_match()
_ref_row = lib.ghostty_grid_ref_row


class _PageRows:
    """Grid refs to consecutive rows of one native page, from `start` on, with room for the
    rows read through them: what `any_wrapped_or_grapheme` reads a screen's flags through (a ref's fields
    set from Python cost more than the native call that reads the row)."""

    def __init__(self, start: object, count: int) -> None:
        self.key = (start.node, start.y, count)  # type: ignore[attr-defined]
        self.count = count
        self._refs = refs = ffi.new("GhosttyGridRef[]", count)
        self._rows = rows = ffi.new("GhosttyRow[]", count)
        for number in range(count):
            refs[number] = start[0]  # type: ignore[index]
            refs[number].y += number
        self._ref_list = [refs + number for number in range(count)]
        self._row_list = [rows + number for number in range(count)]

    def starts_at(self, start: object, count: int) -> bool:
        return self.key == (start.node, start.y, count)  # type: ignore[attr-defined]

    def any_flagged(self, bits: int) -> bool | None:
        """Whether any of the rows has one of the flags `bits`; None if one could not be read."""
        if any(map(_ref_row, self._ref_list, self._row_list)):
            return None
        return any(raw & bits for raw in ffi.unpack(self._rows, self.count))


class NativeHistory:
    """The native terminal's scrollback, drained into `scrollback` (see module docstring)."""

    def __init__(self, terminal: object, scrollback: Scrollback, write: Callable[[bytes], None]) -> None:
        self._t = terminal
        self.store = scrollback
        self._write = write
        self.copied = 0  # native history rows (from the oldest) already in `store`
        self.writes = 0  # program output written (and resizes): what may change the screen
        # Called right after a DECALN took effect (ghostty fills with the pen; tmux does not).
        self.after_alignment: Callable[[], None] | None = None
        self._carry = b""  # the end of the last read, from its last ESC (see feed)
        # An upper bound on native_rows(), kept without asking the library: a program redrawing
        # its screen in place (a TUI) costs no native call a read (see _write_bounded).
        self._rows_at_most = 0
        self._narrowest = self._room_rows = 0  # see _know_columns
        self._size = ffi.new("size_t*")
        self._bool = ffi.new("bool*")
        self._int = ffi.new("int*")
        self._u16 = ffi.new("uint16_t*")
        self._row = ffi.new("GhosttyRow*")
        self.formatter = NativeFormatter(terminal)
        self._row_ref = init_sized("GhosttyGridRef")
        self._last_ref = init_sized("GhosttyGridRef")
        self._page_rows: _PageRows | None = None  # see any_wrapped_or_grapheme
        cap = ffi.new("size_t*", NATIVE_CAP_BYTES)
        lib.ghostty_terminal_set(terminal, lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES, cap)
        # Rows copied out cannot come back, so growing taller adds blank rows (as in pyte).
        lib.ghostty_terminal_set(terminal, lib.GHOSTTY_TERMINAL_OPT_RESIZE_PULL_SCROLLBACK, ffi.new("bool*", False))
        self._know_columns()

    # -- native state ------------------------------------------------------------------

    def native_rows(self) -> int:
        """Rows in the active screen's native scrollback (0 on the alternate screen)."""
        lib.ghostty_terminal_get(self._t, lib.GHOSTTY_TERMINAL_DATA_SCROLLBACK_ROWS, self._size)
        rows = self._rows_at_most = self._size[0]
        return rows

    def _get_u16(self, key: int) -> int:
        lib.ghostty_terminal_get(self._t, key, self._u16)
        return self._u16[0]

    def _columns(self) -> int:
        return self._get_u16(lib.GHOSTTY_TERMINAL_DATA_COLS)

    def _lines(self) -> int:
        return self._get_u16(lib.GHOSTTY_TERMINAL_DATA_ROWS)

    def at_ground(self) -> bool:
        lib.ghostty_terminal_get(self._t, lib.GHOSTTY_TERMINAL_DATA_VT_GROUND, self._bool)
        return bool(self._bool[0])

    def alternate(self) -> bool:
        """Whether the alternate screen is active."""
        lib.ghostty_terminal_get(self._t, lib.GHOSTTY_TERMINAL_DATA_ACTIVE_SCREEN, self._int)
        return self._int[0] != 0

    def _know_columns(self) -> None:
        """Bounds on the width until the next resize: DECCOLM may switch it to 80 or 132
        columns meanwhile, so rows are counted at the narrowest width it can have and the room
        at the widest (what _write_bounded's quick check uses)."""
        columns = self._columns()
        self._narrowest = min(columns, _DECCOLM_NARROW)
        self._room_rows = self._capacity_rows(max(columns, _DECCOLM_WIDE))

    @staticmethod
    def _capacity_rows(columns: int) -> int:
        """Rows the native scrollback surely holds at this width (half its estimated cap)."""
        row = columns * _NATIVE_ROW_BYTES_PER_CELL + _NATIVE_ROW_HEADER_BYTES
        return NATIVE_CAP_BYTES // row // 2

    @property
    def pending(self) -> int:
        """Native rows not in `store` yet."""
        rows = self.native_rows()
        if rows < self.copied:  # the program erased them (RIS)
            self.copied = rows
        return rows - self.copied

    # -- feeding -----------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Write program output to the native terminal, keeping every row it scrolls off."""
        if data:
            self.writes += 1
        # An event may straddle two reads: the tail of the last one (from its last ESC) is
        # scanned again, and an event ending in this read is handled before the rest is written.
        carry = self._carry
        scan = carry + data if carry else data
        last_escape = scan.rfind(b"\x1b", max(len(scan) - _CARRY_BYTES, 0))
        self._carry = scan[last_escape:] if last_escape >= 0 else b""
        event = _EVENTS.search(scan, max(len(carry) - _CARRY_BYTES, 0))
        if event is None:  # most reads (a TUI's every redraw): written as they came
            self._write_bounded(data)
        else:
            self._feed_events(data, scan, len(carry), event)
        # The bound says whether enough rows may wait to ask the library (a TUI's redraw on
        # the alternate screen scrolls none, but its line feeds count).
        if self._rows_at_most - self.copied >= DRAIN_ROWS and self.pending >= DRAIN_ROWS:
            self.drain()

    def _feed_events(self, data: bytes, scan: bytes, carried: int, first: re.Match[bytes]) -> None:
        """feed for a read with an event in it, `first` (in `scan`: the last read's `carried`
        bytes, then `data`)."""
        start = 0
        lines = 0  # the screen's height, read at the first event that needs it
        for event in chain((first,), _EVENTS.finditer(scan, first.end())):
            if event.end() <= carried:
                continue  # handled with the last read
            if event.group(3) is not None:  # DECALN: the hook runs once it has taken effect
                end = event.end() - carried
                self._write_bounded(data[start:end])
                start = end
                if self.after_alignment is not None:
                    self.after_alignment()
                continue
            at = max(event.start() - carried, 0)
            self._write_bounded(data[start:at])
            start = at
            lines = lines or self._lines()
            self._before(event, lines)
            if event.group(1) == b"3":  # ED 3: the program erases scrollback, muxd's included
                end = event.end() - carried
                self._write(data[start:end])
                self.store.clear()
                self.copied = self.native_rows()
                start = end
        self._write_bounded(data[start:])

    def _before(self, event: re.Match[bytes], lines: int) -> None:
        """What must happen to history before `event` takes effect."""
        kind = event.group(1)
        if event.group(2) is not None:
            self._make_room(scroll_rows(event, lines))
        elif self.alternate():
            pass  # the alternate screen has no history
        elif kind == b"3":
            self.copy_new()
        elif kind is None and event.group(0) != b"\x1bc":
            self.drain()  # entering the alternate screen hides the main one's scrollback
        elif kind == b"2" or kind is None or self._cursor_home():
            # ED 2, ED 0 from the home position, RIS: tmux moves the screen into history.
            self.drain()
            self.copy_screen()

    def _cursor_home(self) -> bool:
        x = self._get_u16(lib.GHOSTTY_TERMINAL_DATA_CURSOR_X)
        return x == 0 and self._get_u16(lib.GHOSTTY_TERMINAL_DATA_CURSOR_Y) == 0

    def _write_bounded(self, data: bytes) -> None:
        """Write `data`, draining between pieces so no piece can fill the native scrollback.

        `_rows_at_most` bounds the native rows from above: every exact count sets it, every
        write adds the most rows the bytes can scroll. While it leaves room, no native call."""
        rows = self._row_bound(data, self._narrowest)
        if self._rows_at_most + rows <= self._room_rows:
            self._write(data)
            self._rows_at_most += rows
            return
        while data:
            columns = self._columns()
            room = self._capacity_rows(columns) - self.native_rows()
            if self._row_bound(data, columns) <= room:
                self._emit(data)
                return
            piece = self._piece_for(data, room, columns)
            self._emit(piece)
            self.drain()
            data = data[len(piece) :]

    def _emit(self, data: bytes) -> None:
        """Write `data` to the native terminal, counting the rows it may scroll."""
        self._write(data)
        self._rows_at_most += self._row_bound(data, self._narrowest)

    @staticmethod
    def _row_bound(data: bytes, columns: int) -> int:
        """Most rows `data` can scroll: a row a line feed, VT, FF, escape (IND, NEL) or full row."""
        return len(data.translate(None, _NOT_ROW_BREAKS)) + len(data) // max(columns, 1) + 1

    def _piece_for(self, data: bytes, room: int, columns: int) -> bytes:
        """A prefix of `data` within `room` rows, cut after a line feed where there is one."""
        size = len(data)
        while size > 1 and self._row_bound(data[:size], columns) > max(room, 1):
            size //= 2
        cut = data.rfind(b"\n", 0, size)
        return data[: cut + 1] if cut > size // 2 else data[:size]

    def _make_room(self, rows: int) -> None:
        if self.native_rows() + rows > self._capacity_rows(self._columns()):
            self.drain()

    # -- draining ----------------------------------------------------------------------

    def drain(self) -> None:
        """Copy new native rows into `store` and erase the native scrollback if the parser allows."""
        if self.alternate():
            return
        self.copy_new()
        if self.copied and self.at_ground():
            self._write(b"\x1b[3J")
            self.copied = self._rows_at_most = 0  # ED 3 erased the main screen's scrollback

    def copy_new(self) -> None:
        """Bring `store` up to date with the native scrollback (nothing is erased)."""
        pending = self.pending
        if pending <= 0:
            return
        first = self.copied
        self._copy(HISTORY, first, first + pending - 1, pending)
        self.copied = first + pending

    def copy_rows(self, tag: int, first: int, last: int) -> None:
        """Append native rows first..last to `store`, blank ones included."""
        self._copy(tag, first, last, last - first + 1)

    def write_raw(self, data: bytes) -> None:
        """Write bytes of muxd's own to the native terminal (not scanned for events)."""
        self._emit(data)

    def copy_screen(self) -> None:
        """Append the main screen's rows down to the last one in use (tmux's scroll-on-clear)."""
        self._copy(ACTIVE, 0, self._lines() - 1, None)

    def _copy(self, tag: int, first: int, last: int, rows: int | None) -> None:
        """Append native rows first..last to `store`; `rows` None: only down to the last in use.

        The fast way hands whole lines (soft-wrapped rows joined) to the store as source
        text: right when re-wrapping them gives the rows back, which is checked by counting
        (the formatter leaves out trailing blank rows, added back as such). Where it is not
        (a wrapped row whose continuation was erased later, widths that disagree, a last
        row continuing on the screen), each row is laid out on its own with its native wrap
        flag. Known blind spot: a lost row and a left-out blank row in the same batch cancel
        out in the count, and the blank row ends up last instead of in place."""
        columns = self._columns()
        lines = self._format(tag, first, last, unwrap=True)
        text = lines + "\r\n"
        has_sgr = "\x1b" in text
        if not lines:
            laid_out = 0
        elif rows is not None and _one_row_each(lines, rows):
            laid_out = rows  # no need to lay them out to count them (the store measures once)
        else:
            laid_out = sum(measure_lines(text, has_sgr, columns).rows)
        if rows is None or laid_out != rows or (lines and self.wrapped(tag, last)):
            by_row = self._format(tag, first, last, unwrap=False)
            in_use = by_row.count("\r\n") + 1 if by_row else 0
            rows = in_use if rows is None else rows
            if laid_out != in_use or (lines and self.wrapped(tag, first + in_use - 1)):
                self._copy_by_row(tag, first, by_row, rows)
                return
        if lines:
            end_attrs = advance_attrs(BLANK, text, BLANK) if has_sgr else BLANK
            self.store.append_source(text, has_sgr, columns, BLANK, end_attrs, BLANK)
        for _ in range(rows - laid_out):
            self.store.append(EMPTY_ROW)

    def _copy_by_row(self, tag: int, first: int, by_row: str, rows: int) -> None:
        columns = self._columns()
        store = self.store
        attrs = BLANK
        lines = by_row.split("\r\n") if by_row else []
        for number, line in enumerate(lines):
            laid_out, attrs = render_line(line, attrs, columns, BLANK)
            if self.wrapped(tag, first + number):
                laid_out[-1] = laid_out[-1]._replace(wrapped=True)
            for row in laid_out:
                store.append(row)
        for _ in range(rows - len(lines)):
            store.append(EMPTY_ROW)

    def before_resize(self) -> None:
        """Empty the native scrollback so reflow never touches rows already copied."""
        self.writes += 1
        self.drain()

    def after_resize(self) -> None:
        # Rows that could not be erased (the parser was inside a sequence) are copies already.
        rows = self.native_rows()  # (reflow may have pushed rows up: the bound starts again)
        self.copied = rows if self.copied else 0
        self._know_columns()

    # -- reading the native rows -------------------------------------------------------

    def wrapped(self, tag: int, y: int) -> bool:
        """Whether native row y (in `tag`'s coordinates) soft-wraps into the next one."""
        return self._flagged(tag, y, lib.GHOSTTY_ROW_DATA_WRAP)

    def _flagged(self, tag: int, y: int, key: int) -> bool:
        """Native row y's flag `key` (a GHOSTTY_ROW_DATA_ boolean); False for no such row."""
        if not self.formatter.ref(tag, 0, y, self._row_ref) or lib.ghostty_grid_ref_row(self._row_ref, self._row):
            return False
        lib.ghostty_row_get(self._row[0], key, self._bool)
        return bool(self._bool[0])

    def any_wrapped_or_grapheme(self, tag: int, first: int, last: int) -> bool:
        """Whether any of native rows first..last soft-wraps or holds a cell of several code
        points (the plain formatter may write its text otherwise than the cell reader): a
        turn's end asks it of the whole screen. Where the rows lie in one page (a screen's
        mostly do), through grid refs to each row of it made once (~0.3 us a row, not ~1.3)."""
        start, end, ref_of = self._row_ref, self._last_ref, self.formatter.ref
        if ref_of(tag, 0, first, start) and ref_of(tag, 0, last, end) and start.node == end.node \
                and end.y - start.y == last - first and _ROW_BITS_MATCH:
            page = self._page_rows
            if page is None or not page.starts_at(start, last - first + 1):
                page = self._page_rows = _PageRows(start, last - first + 1)
            flagged = page.any_flagged(_WRAP_OR_GRAPHEME)
            if flagged is not None:
                return flagged
        return any(self._flagged(tag, y, key) for y in range(first, last + 1) for key in _ROW_BITS)

    def _format(self, tag: int, first: int, last: int, *, unwrap: bool) -> str:
        """Rows first..last as VT text with the SGR muxd keeps (NativeFormatter.format)."""
        return plain_sgr(self.formatter.format(tag, first, last, self._columns(), vt=True, unwrap=unwrap))
