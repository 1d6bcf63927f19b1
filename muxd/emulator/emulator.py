"""`Emulator`: one pane's terminal screen, fed bytes, asked for text. Sans-IO: no asyncio."""

from __future__ import annotations

import codecs
import logging
from functools import lru_cache
from operator import itemgetter
from typing import Callable

from muxd.config import DEFAULT_SCROLLBACK_BYTES

from .capture import render_rows
from .screen_html import rows_html
from .cell import Cell
from .flood import FloodSkipper
from .parser import ExtendedStream, FastParser
from .rows import Row, row_text
from .screen import MuxScreen
from .scrollback import Scrollback
from .surface import DeferredFloodOutput, clamp_size

log = logging.getLogger(__name__)

_cell_text = itemgetter(0)


@lru_cache(maxsize=None)
def _in_order(count: int) -> tuple[int, ...]:
    """Column keys 0..count-1 in order: a row written left to right has exactly these."""
    return tuple(range(count))


class Emulator(DeferredFloodOutput):
    """A pane's screen plus scrollback.

    `reply` receives bytes the terminal must write back to the program (answers to
    cursor-position and device queries). `fast_paths=False` selects plain emulation (pyte's
    parser, per-character drawing, no flood skipping): the reference the fast paths must
    match byte for byte.
    """

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
        # Set once feeding (or resizing) raised: the screen may be half-updated, so later output
        # is dropped rather than drawn on it. The pane sees the flag and reports it.
        self.failed = False
        self._scrollback = Scrollback(scrollback_bytes)
        columns, lines = clamp_size(columns, lines)
        self._screen = MuxScreen(columns, lines, self._scrollback, reply, fast_draw=fast_paths)
        # Invalid UTF-8 is dropped, as tmux does (not drawn as U+FFFD).
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        self._flood: FloodSkipper | None = None
        self._display: list[str] = []  # display_lines() as last computed (see there)
        self._display_columns = 0
        self._display_version = -1
        # id(row object) -> (row, a copy of its cells by column, its text): see _refresh_texts
        self._row_texts: dict[int, tuple[object, dict[int, Cell], str]] = {}
        # Several readers (detectors, attached clients) need "rows changed since I last
        # looked", so screen.dirty is drained into per-row version stamps instead of being
        # cleared by whoever reads first.
        self._version = 0
        self._row_versions: list[int] = []
        if fast_paths:
            parser = FastParser(self._screen)
            self._flood = FloodSkipper(self._screen, parser)
            self._feed_text = self._flood.feed
        else:
            self._feed_text = ExtendedStream(self._screen).feed

    # -- input ------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Apply program output. Never raises; UTF-8 split across calls is fine. Dropped once
        `failed` is set."""
        if self.failed:
            return
        try:
            text = self._decoder.decode(data)
            if text:
                self._feed_text(text)
        except Exception:  # a bug here must not take the pane down
            self.failed = True
            log.exception("emulator failed on %d bytes of output", len(data))

    def resize(self, columns: int, lines: int) -> None:
        """Change the screen size (rows cut from the top go to scrollback, as in tmux).

        Sizes are clamped to muxd.config's MIN/MAX_COLUMNS and MIN/MAX_LINES."""
        self._sync()
        columns, lines = clamp_size(columns, lines)
        try:
            self._screen.resize(lines=lines, columns=columns)
        except Exception:
            self.failed = True
            log.exception("emulator resize to %dx%d failed", columns, lines)

    # -- state ------------------------------------------------------------------------

    @property
    def columns(self) -> int:
        return self._screen.columns

    @property
    def lines(self) -> int:
        return self._screen.lines

    @property
    def title(self) -> str:
        return self._screen.title

    @property
    def bell_count(self) -> int:
        return self._screen.bell_count

    @property
    def alternate_screen(self) -> bool:
        return self._screen.alternate

    @property
    def cursor(self) -> tuple[int, int]:
        """(x, y), 0-based; after the last column is written x stays on it, as in tmux."""
        self._sync()
        cursor = self._screen.cursor
        return min(cursor.x, self._screen.columns - 1), cursor.y

    @property
    def history_size(self) -> int:
        self._sync()
        return len(self._scrollback)

    @property
    def rows_scrolled(self) -> int:
        """Rows that ever scrolled off the top: the running number of the top visible row.

        Row numbers counted this way never change for a row (scrollback eviction only drops
        low numbers), so a reader can say "from row N on" across reads."""
        self._sync()
        return self._scrollback.rows_added

    @property
    def history_bytes(self) -> int:
        """Scrollback bytes counted against `scrollback_bytes` (rows.row_size_bytes a row)."""
        self._sync()
        return self._scrollback.size_bytes

    # -- output -----------------------------------------------------------------------

    def display_lines(self) -> list[str]:
        """The visible screen as plain text, one string per row, trailing spaces stripped.

        Detectors ask for this ten times a second per busy pane, so rows are re-read only
        where the screen marked them dirty since the last call."""
        screen = self._screen
        cache = self._display
        since = self._display_version
        if len(cache) != screen.lines or self._display_columns != screen.columns:
            cache[:] = [""] * screen.lines
            self._display_columns = screen.columns
            self._row_texts.clear()
            since = -1
        self._display_version, changed = self.changed_rows(since)
        if changed:
            self._refresh_texts(cache, changed)
        return list(cache)

    def _refresh_texts(self, cache: list[str], changed: list[int]) -> None:
        """Re-read rows `changed` into `cache`, rendering only rows whose cells differ.

        Rows are marked dirty far more often than they change: a scroll marks every row (the
        row objects only move up), and TUIs redraw their live region unchanged each frame.
        So each row's text is remembered with a copy of its cells (keyed by the row object,
        which a scroll moves), and a row is rendered again only if a cell or its column
        changed: one dict compare, a fifth of the cost of rendering it."""
        screen = self._screen
        buffer = screen.buffer
        columns = screen.columns
        known = self._row_texts
        for y in changed:
            line = buffer.get(y)
            if not line:
                cache[y] = ""
                continue
            entry = known.get(id(line))
            if entry is not None and entry[0] is line and entry[1] == line:
                cache[y] = entry[2]
                continue
            keys = tuple(line)
            if len(keys) <= columns and keys == _in_order(len(keys)):
                text = "".join(map(_cell_text, line.values())).rstrip(" ")  # row_text's result, known order
            else:
                text = row_text(line, columns).rstrip(" ")
            known[id(line)] = (line, dict(line), text)
            cache[y] = text
        if len(known) > 2 * screen.lines:
            # Forget rows that left the screen (scrolled off, cleared, another buffer).
            shown = {id(line) for line in buffer.values()}
            for key in [key for key in known if key not in shown]:
                del known[key]

    def changed_rows(self, since: int) -> tuple[int, list[int]]:
        """(version now, visible rows changed after version `since`); since=-1 gives all rows.

        Pass the returned version next time. The screen's size can change in between:
        callers caching rows check `columns`/`lines` themselves."""
        self._sync()
        screen = self._screen
        versions = self._row_versions
        if len(versions) != screen.lines:
            self._version += 1
            versions[:] = [self._version] * screen.lines
            screen.dirty.clear()
        elif screen.dirty:
            self._version += 1
            version = self._version
            lines = screen.lines
            for y in screen.dirty:
                if 0 <= y < lines:
                    versions[y] = version
            screen.dirty.clear()
        return self._version, [y for y, v in enumerate(versions) if v > since]

    def row_cells(self, y: int) -> tuple[Cell, ...]:
        """Visible row `y` as exactly `columns` cells (a wide character's right half has data "")."""
        self._sync()
        screen = self._screen
        line = screen.buffer.get(y)
        if line is None:
            return (screen.default_char,) * screen.columns
        return tuple(map(line.__getitem__, range(screen.columns)))

    def rows_cells(self, ys: list[int]) -> list[tuple[Cell, ...]]:
        """`row_cells` of each of the rows `ys` (ascending)."""
        return [self.row_cells(y) for y in ys]

    def vt_rows(self, ys: list[int]) -> None:
        """Rows as escape text (the native backend's, ghostty_vt_rows.py): none here, rows
        are read as cells."""
        return None

    @property
    def private_modes(self) -> frozenset[int]:
        """DEC private modes set (as in `CSI ? N h`, e.g. 1, 66, 1000, 1006, 2004)."""
        return frozenset(mode >> 5 for mode in self._screen.mode if mode >= 32 and not mode & 31)

    @property
    def cursor_visible(self) -> bool:
        """DECTCEM: whether the program wants the cursor shown."""
        return not self._screen.cursor.hidden

    def capture(
        self,
        start: int | None = None,
        end: int | None = None,
        *,
        escapes: bool = False,
        join_wrapped: bool = False,
    ) -> str:
        """Rows start..end as text, like `tmux capture-pane -p [-e] [-J] -S start -E end`.

        Row 0 is the top visible row, negative rows are scrollback (-1 the newest); None
        means the first/last visible row; out-of-range values are clamped.
        """
        self._sync()
        return render_rows(self.rows(start, end), escapes=escapes, join_wrapped=join_wrapped)

    def screen_html(self, start: int | None = None, end: int | None = None) -> str:
        """Rows start..end (as `capture` numbers them) as escaped, classed HTML, the cursor marked
        where the program shows it (screen_html.py)."""
        first, _ = self.span(start, end)
        x, y = self.cursor
        return rows_html(self.rows(start, end), (x, y - first) if self.cursor_visible else None)

    def text_lines(self, start: int | None = None) -> list[str]:
        """`capture(start, join_wrapped=True).split("\\n")` (the libghostty backend reads it faster)."""
        return self.capture(start, join_wrapped=True).split("\n")

    def span(self, start: int | None = None, end: int | None = None) -> tuple[int, int]:
        """(first, last) row that `rows(start, end)` gives, after clamping (same numbering)."""
        self._sync()
        history = len(self._scrollback)
        last = self._screen.lines - 1
        first = min(max(0 if start is None else start, -history), last)
        final = min(max(last if end is None else end, -history), last)
        return (final, first) if final < first else (first, final)

    def rows(self, start: int | None = None, end: int | None = None) -> list[Row]:
        """Compact rows start..end (same numbering as `capture`)."""
        first, final = self.span(start, end)
        history = len(self._scrollback)
        rows: list[Row] = []
        if first < 0:
            rows.extend(self._scrollback.rows(history + first, history + min(final, -1) + 1))
        screen = self._screen
        rows.extend(screen.visible_row(y) for y in range(max(first, 0), final + 1))
        return rows
