"""`GhosttyEmulator`: the `Emulator` surface over libghostty-vt (PyPI `pyghostty`, cffi).

The native terminal parses and keeps the screen; this class turns its cells into muxd's
`Cell`/`Row` shapes so capture, attach and detectors read it unchanged. Rows scrolled off
the main screen move into muxd's compact `Scrollback` (ghostty_history.py).

Known differences from tmux (tests/test_fidelity.py lists them): colours 0-15 set by
`38;5;N` read back as the named SGR colours (ghostty keeps one palette index for both), so
`capture -e` prints `31` where tmux prints `38;5;1`; in history (rows come through the VT
formatter), unwritten cells between styled runs of a row take the style before them.
"""

from __future__ import annotations

import codecs
import re
import logging
import weakref
from itertools import compress
from typing import Callable

from muxd.config import DEFAULT_SCROLLBACK_BYTES

from .capture import render_rows
from .screen_html import rows_html
from .cell import BLANK, Cell
from .cell_layout import row_cells
from .ghostty_cells import GridCells
from .ghostty_ffi import Terminal, ffi, lib
from .ghostty_format import ACTIVE
from .ghostty_flood import DECRQSS_REPLY, NativeFloodSkipper, pen_sequence
from .ghostty_history import NativeHistory, plain_sgr
from .ghostty_rows import NativeRowCells, layout_matches
from .ghostty_vt_rows import vt_rows
from .source_block import render_line
from .scrollback import Scrollback
from .rows import EMPTY_ROW, Row
from .surface import DeferredFloodOutput, clamp_size
from .vt_row import VtRow
from .widths import CHAR_WIDTHS

log = logging.getLogger(__name__)

# DEC private modes callers look for (attach: mouse, paste, cursor keys, focus; executions:
# bracketed paste). private_modes reports those of them that are set.
REPORTED_PRIVATE_MODES = (1, 5, 6, 7, 12, 25, 47, 66, 1000, 1002, 1003, 1004, 1005, 1006, 1015,
                          1047, 1049, 2004, 2026)
_CURSOR_VISIBLE_MODE = 25

_render_state_free = lib.ghostty_render_state_free
_row_iterator_free = lib.ghostty_render_state_row_iterator_free


def _free_render(state: object, iterator: object) -> None:
    _row_iterator_free(iterator)
    _render_state_free(state)


# Visible rows read a row per native call (ghostty_rows.py) when the library packs cells as expected.
_ROWS_NATIVE = layout_matches()
# Screen rows whose characters each take one cell: a turn's end checks its screen's rows
# (text_lines), which are mostly the ones the agent drew at the turns before.
NARROW_ROWS_KEPT = 4096
_NARROW_ROWS: set[str] = set()


class GhosttyEmulator(DeferredFloodOutput):
    """A pane's screen plus scrollback, emulated by libghostty-vt. Same surface as `Emulator`."""

    backend = "ghostty"

    def __init__(
        self,
        columns: int = 80,
        lines: int = 24,
        scrollback_bytes: int = DEFAULT_SCROLLBACK_BYTES,
        reply: Callable[[bytes], None] | None = None,
        *,
        fast_paths: bool = True,
    ) -> None:
        self.fast_paths = fast_paths
        columns, lines = clamp_size(columns, lines)
        self._columns, self._lines = columns, lines
        # Lines cap is set huge so only the byte cap applies (pyghostty's default is 10k lines).
        self._term = Terminal(columns, lines, scrollback=1 << 30)
        self._t = self._term._t[0]
        self._reply = reply
        self._replies: list[bytes] | None = None  # collecting answers to muxd's own queries
        self._term.on_reply(self._on_reply)
        self.bell_count = 0
        self._bell_cb = ffi.callback("GhosttyTerminalBellFn", self._on_bell)
        lib.ghostty_terminal_set(self._t, lib.GHOSTTY_TERMINAL_OPT_BELL, self._bell_cb)
        # Answer primary DA as the pyte emulator (and tmux) do: "CSI ? 1 ; 2 c".
        self._da_cb = ffi.callback("GhosttyTerminalDeviceAttributesFn", self._on_device_attributes)
        lib.ghostty_terminal_set(self._t, lib.GHOSTTY_TERMINAL_OPT_DEVICE_ATTRIBUTES, self._da_cb)
        # Invalid UTF-8 is dropped, as tmux and the pyte emulator do (ghostty draws U+FFFD).
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        self._utf8_pending = False  # the decoder holds the start of a character from the last read
        self._feed_text = self._term.feed
        self._scrollback = Scrollback(scrollback_bytes)
        self._history = NativeHistory(self._t, self._scrollback, self._feed_text)
        self._history.after_alignment = self._align_in_default_style
        self._flood = NativeFloodSkipper(self, self._history, self._term.mode) if fast_paths else None
        self.failed = False  # set after the native core raised: further output is dropped
        # scratch out-parameters, reused
        self._u16 = ffi.new("uint16_t*")
        self._dirty_y = ffi.new("uint16_t*")
        self._size = ffi.new("size_t*")
        self._bool = ffi.new("bool*")
        self._mode_config = ffi.new("GhosttyTerminalModeConfig*")
        self._int = ffi.new("int*")
        # Dirty rows: a render state updated from the terminal, drained into version stamps.
        self._render = ffi.new("GhosttyRenderState*")
        lib.ghostty_render_state_new(ffi.NULL, self._render)
        self._rows_iter = ffi.new("GhosttyRenderStateRowIterator*")
        lib.ghostty_render_state_row_iterator_new(ffi.NULL, self._rows_iter)
        # Freed by functions bound now: a finalizer must not look up cffi's `lib` attributes,
        # which takes cffi's lock (a GC pass inside a lookup would deadlock on it).
        weakref.finalize(self, _free_render, self._render[0], self._rows_iter[0])
        self._version = 0
        self._row_versions: list[int] = []
        self._display: list[str] | None = None
        self._display_version = -1
        self._text_may_have_joined = False  # non-ASCII output since changed_rows: see there
        self._writes = 0  # feeds and resizes: the row reader knows its render state is stale
        # Rows changed without libghostty flagging them (a joined mark, see changed_rows): the
        # render state's copy of them lags until they are flagged, so they are read from the grid.
        self._unflagged_rows: set[int] = set()
        self._modes: frozenset[int] = frozenset()
        self._modes_at = -1  # self._writes when _modes was read
        # Every reported mode read in one ghostty_terminal_get_multi call (a TUI's every frame
        # asks again): a query struct a mode, their `value`s read back as one string of bytes.
        self._mode_numbers = tuple(n for n in REPORTED_PRIVATE_MODES if n != _CURSOR_VISIBLE_MODE)
        self._mode_queries = ffi.new("GhosttyTerminalModeConfig[]", len(self._mode_numbers))
        for query, number in zip(self._mode_queries, self._mode_numbers):
            query.mode = number & 0x7FFF  # ghostty_mode_new's packing (a static inline in C)
        self._mode_keys = ffi.new("GhosttyTerminalData[]", [lib.GHOSTTY_TERMINAL_DATA_MODE] * len(self._mode_numbers))
        self._mode_values = ffi.new("void*[]", [ffi.addressof(self._mode_queries, i)
                                                for i in range(len(self._mode_numbers))])
        self._mode_bytes = ffi.buffer(self._mode_queries)
        self._mode_value_at = slice(ffi.offsetof("GhosttyTerminalModeConfig", "value"), None,
                                    ffi.sizeof("GhosttyTerminalModeConfig"))
        self._mode_flags = b""  # the values last read, and `_modes` made from them
        self._row_reader = NativeRowCells(self._render[0]) if _ROWS_NATIVE else None
        self._grid = GridCells(self._t)  # cell by cell, where no faster read holds

    @staticmethod
    def _on_device_attributes(terminal: object, userdata: object, out: object) -> bool:
        out.primary.conformance_level = 1  # type: ignore[attr-defined]
        out.primary.features[0] = 2  # type: ignore[attr-defined]
        out.primary.num_features = 1  # type: ignore[attr-defined]
        return True

    def _on_reply(self, data: bytes) -> None:
        if self._replies is not None:
            self._replies.append(data)
        elif self._reply is not None:
            self._reply(data)

    def query(self, request: bytes, answer: "re.Pattern[bytes]") -> list[tuple[bytes, ...]]:
        """Ask the native terminal `request` (e.g. DECRQSS) and parse its answers with
        `answer`; the answers never reach the program."""
        self._replies = []
        try:
            self._history.write_raw(request)
            return answer.findall(b"".join(self._replies))
        finally:
            self._replies = None

    def pen(self) -> str | None:
        """The SGR sequence that sets the current pen (read back with DECRQSS), or None."""
        replies = self.query(b"\x1bP$qm\x1b\\", DECRQSS_REPLY)
        return pen_sequence(replies[0][0]) if replies else None

    def _align_in_default_style(self) -> None:
        """DECALN once more in the default style, then the pen back: ghostty fills the screen
        with the pen, tmux (and the pyte backend) with default cells."""
        self._history.write_raw(b"\x1b[0m\x1b#8" + (self.pen() or "\x1b[0m").encode("ascii"))

    def _on_bell(self, terminal: object, userdata: object) -> None:
        self.bell_count += 1

    # -- input ------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Apply program output. Never raises."""
        if self.failed or not data:
            return
        self._writes += 1
        try:
            text = None  # `data` as text, when it had to be decoded (the flood skipper uses it)
            if not data.isascii() or self._utf8_pending:
                self._text_may_have_joined = True
                text = self._decoder.decode(data)
                data = text.encode("utf-8", "surrogatepass")
                self._utf8_pending = bool(self._decoder.getstate()[0])  # (a Python call: not every read)
            if b"\x7f" in data:  # DEL does nothing in tmux (and pyte); ghostty would draw it
                data, text = data.replace(b"\x7f", b""), None
            if not data:
                pass
            elif self._flood is not None:
                self._flood.feed(data, text)
            else:
                self._history.feed(data)
        except Exception:
            self.failed = True
            log.exception("ghostty emulator failed on %d bytes of output: the pane's output is no longer emulated",
                          len(data))

    def resize(self, columns: int, lines: int) -> None:
        """Change the screen size; the main screen reflows (tmux does too)."""
        columns, lines = clamp_size(columns, lines)
        if (columns, lines) == (self._columns, self._lines) or self.failed:
            return
        self._sync()
        self._writes += 1
        try:
            self._history.before_resize()
            self._term.resize(columns, lines)
            self._history.after_resize()
        except Exception:
            self.failed = True
            log.exception("ghostty emulator resize to %dx%d failed", columns, lines)
            return
        self._columns, self._lines = columns, lines

    # -- state ------------------------------------------------------------------------

    def _get_u16(self, key: int) -> int:
        lib.ghostty_terminal_get(self._t, key, self._u16)
        return self._u16[0]

    def _get_bool(self, key: int) -> bool:
        lib.ghostty_terminal_get(self._t, key, self._bool)
        return bool(self._bool[0])

    @property
    def columns(self) -> int:
        return self._columns

    @property
    def lines(self) -> int:
        return self._lines

    @property
    def title(self) -> str:
        self._sync()
        s = self._term.get("title", "GhosttyString")
        return ffi.buffer(s.ptr, s.len)[:].decode("utf-8", "replace") if s.len else ""

    @property
    def pwd(self) -> str:
        """The working directory the program reported (OSC 7), or ""."""
        self._sync()
        s = self._term.get("pwd", "GhosttyString")
        return ffi.buffer(s.ptr, s.len)[:].decode("utf-8", "replace") if s.len else ""

    @property
    def alternate_screen(self) -> bool:
        self._sync()
        return self._history.alternate()

    @property
    def cursor(self) -> tuple[int, int]:
        self._sync()
        x = self._get_u16(lib.GHOSTTY_TERMINAL_DATA_CURSOR_X)
        y = self._get_u16(lib.GHOSTTY_TERMINAL_DATA_CURSOR_Y)
        return min(x, self._columns - 1), y

    @property
    def history_size(self) -> int:
        self._sync()
        self._history.copy_new()
        return len(self._scrollback)

    @property
    def rows_scrolled(self) -> int:
        """Rows that ever scrolled off the top (see Emulator.rows_scrolled)."""
        self._sync()
        return self._scrollback.rows_added + max(self._history.pending, 0)

    @property
    def history_bytes(self) -> int:
        """Scrollback bytes counted against `scrollback_bytes` (as in Emulator)."""
        self._sync()
        self._history.copy_new()
        return self._scrollback.size_bytes

    # -- output -----------------------------------------------------------------------

    def changed_rows(self, since: int) -> tuple[int, list[int]]:
        """(version now, visible rows changed after version `since`); since=-1 gives all rows."""
        self._sync()
        lines = self._lines
        versions = self._row_versions
        state = self._render[0]
        lib.ghostty_render_state_update(state, self._t)
        if self._row_reader is not None:  # rows read next come from this update
            self._row_reader.restart(self._writes)
        lib.ghostty_render_state_get(state, lib.GHOSTTY_RENDER_STATE_DATA_DIRTY, self._int)
        dirty = self._int[0]
        if len(versions) != lines or dirty == lib.GHOSTTY_RENDER_STATE_DIRTY_FULL:
            self._version += 1
            versions[:] = [self._version] * lines
            self._unflagged_rows.clear()
            if dirty != lib.GHOSTTY_RENDER_STATE_DIRTY_FALSE:
                self._clean_rows(state, None)
        elif dirty != lib.GHOSTTY_RENDER_STATE_DIRTY_FALSE:
            self._version += 1
            self._clean_rows(state, versions)
        if self._text_may_have_joined:
            # libghostty joins a zero-width character (a combining mark, VS16, ZWJ) to the
            # cell before the cursor without marking that row dirty. Every cursor move marks
            # the row it leaves, so a cell joined since the last call is on a dirty row or on
            # the cursor's: that row counts as changed too (a reader keeps it if it is equal).
            self._text_may_have_joined = False
            cursor_y = self._get_u16(lib.GHOSTTY_TERMINAL_DATA_CURSOR_Y)
            if cursor_y < lines:
                self._version += 1
                versions[cursor_y] = self._version
                self._unflagged_rows.add(cursor_y)
        return self._version, [y for y, v in enumerate(versions) if v > since]

    def _clean_rows(self, state: object, versions: list[int] | None) -> None:
        """Stamp dirty rows with the current version (when `versions`), then mark all clean:
        the native iterator visits only the dirty rows, and one call clears every flag."""
        if versions is not None:
            iterator = self._rows_iter[0]
            lib.ghostty_render_state_get(state, lib.GHOSTTY_RENDER_STATE_DATA_ROW_ITERATOR, self._rows_iter)
            y, next_dirty = self._dirty_y, lib.ghostty_render_state_row_iterator_next_dirty
            version, lines, unflagged = self._version, len(versions), self._unflagged_rows
            while next_dirty(iterator, y):
                row = y[0]
                if row < lines:
                    versions[row] = version
                    if unflagged:
                        unflagged.discard(row)
        lib.ghostty_render_state_clean(state)

    def display_lines(self) -> list[str]:
        """The visible screen as plain text, one string per row, trailing spaces stripped."""
        version, changed = self.changed_rows(self._display_version)
        cache = self._display
        if cache is None or len(cache) != self._lines or self._display_version < 0:
            cache = self._display = [""] * self._lines
            changed = list(range(self._lines))
        self._display_version = version
        if changed:
            # One plain-formatter call over the changed rows (~10 us plus a little a row) is
            # far cheaper than reading even one row cell by cell through cffi.
            first, last = changed[0], changed[-1]
            texts = self._history.formatter.format(ACTIVE, first, last, self._columns, vt=False, unwrap=False)
            texts = texts.split("\n") if texts else []
            for y in changed:
                number = y - first
                cache[y] = texts[number].rstrip(" ") if number < len(texts) else ""
        return list(cache)

    def row_cells(self, y: int) -> tuple[Cell, ...]:
        """Visible row `y` as exactly `columns` cells (a wide character's right half has data "")."""
        if not 0 <= y < self._lines:
            return (BLANK,) * self._columns
        self._sync()
        reader = self._fresh_reader(y)
        if reader is not None:
            if y in self._unflagged_rows:  # its copy in the render state lags: cell by cell
                got = self._grid.read_cells(ACTIVE, y, self._columns, styles=True, full=True)
                if got is not None:
                    return tuple(Cell(text, *style) for text, style in got[0])
            cells = reader.row(y, self._columns)
            if cells is not None:
                return cells
        return row_cells(self._visible_rows(y, y)[0], self._columns)

    def rows_cells(self, ys: list[int]) -> list[tuple[Cell, ...]]:
        """`row_cells` of each of the visible rows `ys` (ascending), read in one pass."""
        self._sync()
        if ys and 0 <= ys[0] and ys[-1] < self._lines:
            reader = self._fresh_reader(ys[0])
            if reader is not None and not (self._unflagged_rows and self._unflagged_rows.intersection(ys)):
                rows = reader.rows(ys, self._columns)
                if rows is not None:
                    return rows
        return [self.row_cells(y) for y in ys]

    def vt_rows(self, ys: list[int]) -> list[VtRow | None] | None:
        """Visible rows `ys` (ascending) as the formatter's text (ghostty_vt_rows.py), None for
        each row that must be read as cells (`rows_cells`); None when none can be."""
        self._sync()
        if not ys or not (0 <= ys[0] and ys[-1] < self._lines):
            return None
        reader = self._fresh_reader(ys[0])
        if reader is None:
            return None
        rows = vt_rows(self._history.formatter, reader, ys, self._columns)
        if self._unflagged_rows:  # their copy in the render state lags: read from the grid
            rows = [None if y in self._unflagged_rows else row for y, row in zip(ys, rows)]
        return rows

    def _fresh_reader(self, y: int) -> NativeRowCells | None:
        """The native row reader, ready to read row `y` from an up-to-date render state."""
        reader = self._row_reader
        if reader is None or self.failed:
            return None
        if reader.stale(self._writes, y):
            self.changed_rows(self._version)  # the render state brought up to date
            reader.restart(self._writes)
        return reader

    @property
    def private_modes(self) -> frozenset[int]:
        self._sync()
        # Asked at every frame of every attached client: read again only after output.
        if self._modes_at != self._writes:
            self._modes_at = self._writes
            written = self._size
            if lib.ghostty_terminal_get_multi(self._t, len(self._mode_numbers), self._mode_keys, self._mode_values,
                                              written) or written[0] != len(self._mode_numbers):
                self._modes = frozenset(n for n in self._mode_numbers if self._mode_set(n))
                self._mode_flags = b""
                return self._modes
            flags = self._mode_bytes[:][self._mode_value_at]
            if flags != self._mode_flags:  # mostly the same as the last frame's: no set made
                self._modes = frozenset(compress(self._mode_numbers, flags))
                self._mode_flags = flags
        return self._modes

    def _mode_set(self, number: int) -> bool:
        """Whether DEC private mode `number` is set: one C call into a reused struct (a TUI's
        every frame asks again for all of REPORTED_PRIVATE_MODES)."""
        config = self._mode_config
        config.mode = number & 0x7FFF  # ghostty_mode_new's packing (a static inline in C)
        config.value = False
        lib.ghostty_terminal_get(self._t, lib.GHOSTTY_TERMINAL_DATA_MODE, config)
        return bool(config.value)

    @property
    def cursor_visible(self) -> bool:
        self._sync()
        return self._get_bool(lib.GHOSTTY_TERMINAL_DATA_CURSOR_VISIBLE)

    def capture(self, start: int | None = None, end: int | None = None, *, escapes: bool = False,
                join_wrapped: bool = False) -> str:
        return render_rows(self.rows(start, end), escapes=escapes, join_wrapped=join_wrapped)

    def screen_html(self, start: int | None = None, end: int | None = None) -> str:
        """Rows start..end (as `capture` numbers them) as escaped, classed HTML, the cursor marked
        where the program shows it (screen_html.py)."""
        first, _ = self.span(start, end)
        x, y = self.cursor
        return rows_html(self.rows(start, end), (x, y - first) if self.cursor_visible else None)

    def text_lines(self, start: int | None = None) -> list[str]:
        """`capture(start, join_wrapped=True).split("\\n")`, the screen's rows read as plain text
        in one formatter call (~30x less than reading them as rows: the history reads a turn's
        answer so at the end of every turn)."""
        self._sync()
        first, _ = self.span(start, None)
        head: list[str] = []
        if first < 0:
            history = self.history_size
            rows = self._scrollback.rows(history + first, history)
            if rows and rows[-1].wrapped:  # a line that goes on into the screen
                return self.capture(start, join_wrapped=True).split("\n")
            head = render_rows(rows, join_wrapped=True).split("\n")[:-1]
        screen = self._plain_screen()
        return head + screen if screen is not None else self.capture(start, join_wrapped=True).split("\n")

    def _plain_screen(self) -> list[str] | None:
        """The visible rows' lines as `text_lines` gives them; None where the capture could lay
        them out differently: a soft wrap (the capture joins it), a character not one cell wide,
        a cell of several code points (the formatter drops a combining mark on a space)."""
        # The rows as display_lines keeps them (the detector has read most of them already:
        # only rows changed since are formatted). With no row wrapped, the capture joins none.
        rows = self.display_lines()
        if self._history.any_wrapped_or_grapheme(ACTIVE, 0, self._lines - 1):
            return None
        # (The text is these rows and spaces.) A row of the screen is mostly one seen before.
        if not all(_narrow(row) for row in set(rows).difference(_NARROW_ROWS)):
            return None
        return rows + [""]

    def span(self, start: int | None = None, end: int | None = None) -> tuple[int, int]:
        history = self.history_size
        last = self._lines - 1
        first = min(max(0 if start is None else start, -history), last)
        final = min(max(last if end is None else end, -history), last)
        return (final, first) if final < first else (first, final)

    def rows(self, start: int | None = None, end: int | None = None) -> list[Row]:
        self._sync()
        first, final = self.span(start, end)
        history = self.history_size
        out = self._scrollback.rows(history + first, history + min(final, -1) + 1) if first < 0 else []
        if final >= 0:
            out.extend(self._visible_rows(max(first, 0), final))
        return out

    def _visible_rows(self, first: int, last: int) -> list[Row]:
        """Visible rows first..last, from one VT-formatter call. Styled rows are read cell by
        cell: the formatter writes unwritten cells after a styled run as spaces in that
        style. So are rows whose text lays out differently from ghostty's cells."""
        history = self._history
        columns = self._columns
        text = history.formatter.format(ACTIVE, first, last, columns, vt=True, unwrap=False)
        lines = plain_sgr(text).split("\r\n") if text else []
        out: list[Row] = []
        for y in range(first, last + 1):
            number = y - first
            if number < len(lines) and "\x1b" in lines[number]:
                row = self._styled_row(y)
            elif number < len(lines):
                laid_out, _ = render_line(lines[number], BLANK, columns, BLANK)  # no SGR: default style
                row = laid_out[0] if len(laid_out) == 1 else self._styled_row(y)
            elif self._row_reader is not None:
                # The formatter leaves out trailing rows of background-coloured erased cells.
                row = self._styled_row(y)
            else:
                row = EMPTY_ROW
            if history.wrapped(ACTIVE, y):
                row = row._replace(wrapped=True)
            out.append(row)
        return out

    def _styled_row(self, y: int) -> Row:
        """Visible row `y` from the native row reader (a few native calls a row), or cell by
        cell without it. A wrapped row ending in a blank is read cell by cell: only that way
        is a written space (content when joining) told from the unwritten cell a wide
        character that did not fit leaves."""
        reader = self._fresh_reader(y)
        if reader is None or y in self._unflagged_rows:  # (the render state's copy lags)
            return self._grid.read_row(ACTIVE, y, self._columns)
        row = reader.compact_row(y, self._columns)
        if row is None or len(row.text) < self._columns and self._history.wrapped(ACTIVE, y):
            return self._grid.read_row(ACTIVE, y, self._columns)
        return row


def _narrow(row: str) -> bool:
    """Whether each character of `row` takes one cell (kept in _NARROW_ROWS if so)."""
    if not row.isascii() and any(CHAR_WIDTHS[char] != 1 for char in set(row)):
        return False
    if len(_NARROW_ROWS) >= NARROW_ROWS_KEPT:
        _NARROW_ROWS.clear()
    _NARROW_ROWS.add(row)
    return True
