"""Flood skipping: lines that provably only scroll into scrollback are not emulated.

When the cursor is at column 0 with only blank rows from there down, on the main screen with
default margins, modes and character set, and the parser is between sequences, a run of
"simple" lines (printable text, SGR sequences and, with the default tab stops, tabs; each
ended by CRLF) has a known effect: every line becomes the rows line_layout.py works out (for
one-cell characters without tabs, `ceil(cells / columns)`, one if empty), soft-wrapped at
the width, and all but the last `lines - 1` rows scroll off. So the rows above the cursor and the run
minus its last screenful go straight to scrollback as a `SourceBlock`, the screen is cleared
with the cursor at home and the attributes the skipped SGRs would leave, and only the last
screenful is emulated. While a flood goes on, that last screenful (plus a partial line) is
deferred to the next feed, where it usually scrolls off too; any query flushes it first.
"""

from __future__ import annotations

from pyte import modes

from .flood_text import (
    FLOOD_DEFER_MAX_CHARS, FLOOD_MIN_CHARS, is_simple_partial_line, screenful_start, simple_run_end,
)
from .line_layout import last_drawn_char
from .parser import FastParser
from .screen import MuxScreen
from .source_block import advance_attrs
from .tab_stops import default_tab_stops

_MODES_THAT_CHANGE_TEXT = frozenset({modes.IRM, modes.LNM, modes.DECOM, modes.DECSCNM})


def tabs_allowed(screen: MuxScreen) -> bool:
    """True if tabs can be in simple lines on `screen` (its tab stops are the default ones)."""
    return screen.tabstops == default_tab_stops(screen.columns)


def can_skip_from_here(screen: MuxScreen, parser: FastParser) -> bool:
    """True when simple lines fed now would behave as the module docstring says."""
    if not parser.idle or screen.alternate or screen.in_string or screen.cursor.x != 0:
        return False
    if screen.translation is not None:  # skipped text would reach scrollback untranslated
        return False
    mode = screen.mode
    if modes.DECAWM not in mode or not _MODES_THAT_CHANGE_TEXT.isdisjoint(mode):
        return False
    margins = screen.margins
    if margins is not None and (margins.top != 0 or margins.bottom != screen.lines - 1):
        return False
    buffer = screen.buffer
    for y in range(screen.cursor.y, screen.lines):
        line = buffer.get(y)
        if line is not None and (line or line.wrapped):
            return False
    return True


class FloodSkipper:
    """Feeds text to the parser, sending provably scroll-only lines straight to scrollback."""

    def __init__(self, screen: MuxScreen, parser: FastParser) -> None:
        self._screen = screen
        self._parser = parser
        self._deferred = ""
        self.skipped_chars = 0  # how much text never reached the parser (for benchmarks)

    def flush(self) -> None:
        """Emulate whatever a flood left deferred, so the screen is up to date."""
        if self._deferred:
            text, self._deferred = self._deferred, ""
            self._parser.feed(text)

    def feed(self, text: str) -> None:
        if self._deferred:
            text, self._deferred = self._deferred + text, ""
        position, end = 0, len(text)
        parser = self._parser
        while position < end:
            if not can_skip_from_here(self._screen, parser):
                position = self._emulate_line(text, position)
                continue
            tabs = tabs_allowed(self._screen)
            run_end = simple_run_end(text, position, tabs)
            if is_simple_partial_line(text, run_end, tabs):
                # Everything left is simple: skip what is provably scrollback, defer the rest.
                position = self._skip(text, position, run_end)
                if end - position > FLOOD_DEFER_MAX_CHARS:  # do not rescan a huge tail each feed
                    parser.feed(text[position:])
                else:
                    self._deferred = text[position:]
                return
            if run_end - position >= FLOOD_MIN_CHARS:
                position = self._skip(text, position, run_end)
            parser.feed(text[position:run_end])
            position = self._emulate_line(text, run_end)

    def _emulate_line(self, text: str, position: int) -> int:
        """Emulate up to and including the next line feed; return the position after it."""
        newline = text.find("\n", position)
        stop = len(text) if newline < 0 else newline + 1
        self._parser.feed(text[position:stop])
        return stop

    def _skip(self, text: str, start: int, run_end: int) -> int:
        """Send all but the last screenful of simple lines text[start:run_end] to scrollback."""
        screen = self._screen
        columns = screen.columns
        keep_from = screenful_start(text, start, run_end, screen.lines - 1, columns)
        if keep_from == start:
            return start
        skipped = text[start:keep_from]
        cursor = screen.cursor
        default = screen.default_char
        has_sgr = "\x1b" in skipped
        end_attrs = advance_attrs(cursor.attrs, skipped, default) if has_sgr else cursor.attrs
        scrollback = screen.scrollback
        for y in range(cursor.y):  # rows above the cursor scroll off first
            scrollback.append(screen.visible_row(y))
        scrollback.append_source(skipped, has_sgr, columns, cursor.attrs, end_attrs, default)
        screen.buffer.clear()
        cursor.x = cursor.y = 0
        cursor.attrs = end_attrs
        screen.last_char = last_drawn_char(skipped) or screen.last_char  # for REP
        screen.dirty.update(range(screen.lines))
        self.skipped_chars += len(skipped)
        return keep_from
