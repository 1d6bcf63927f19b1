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

import re

from pyte import modes

from .cursor_rules import default_tab_stops
from .line_layout import SGR_SEQUENCE, last_drawn_char, line_rows
from .parser import FastParser
from .screen import MuxScreen
from .source_block import advance_attrs

# Simple lines followed by other output are only skipped in runs at least this long.
FLOOD_MIN_CHARS = 4096
# Deferred flood text (last screenful + partial line) is emulated instead beyond this size.
FLOOD_DEFER_MAX_CHARS = 64 * 1024

# What simple lines are made of, besides SGR: printable text (ASCII, or U+00A0 on: no C1
# controls), CR, LF and ESC; tabs too when the tab stops are the default ones.
_SIMPLE_CHARS = " -~\r\n\x1b\xa0-\U0010ffff"  # a regex class body
_SIMPLE_RUN = {False: re.compile(f"[{_SIMPLE_CHARS}]*"), True: re.compile(f"[\t{_SIMPLE_CHARS}]*")}
_SIMPLE_ASCII = bytes([*b"\r\n\x1b", *range(0x20, 0x7F)])
_SIMPLE_ASCII_BYTES = {False: _SIMPLE_ASCII, True: _SIMPLE_ASCII + b"\t"}
_FIRST_WINDOW_CHARS = 1024
BAD_ESCAPE = re.compile(r"\x1b(?!\[[0-9;]*m)")
_BARE_CR = re.compile(r"\r(?!\n)")
_PARTIAL_SGR = re.compile(r"\x1b(?:\[[0-9;]*)?\Z")
_MODES_THAT_CHANGE_TEXT = frozenset({modes.IRM, modes.LNM, modes.DECOM, modes.DECSCNM})


def tabs_allowed(screen: MuxScreen) -> bool:
    """True if tabs can be in simple lines on `screen` (its tab stops are the default ones)."""
    return screen.tabstops == default_tab_stops(screen.columns)


def first_bad_char(text: str, start: int, end: int, tabs: bool) -> int:
    """Where text[start:end] first has a character that cannot be in a simple line (or `end`)."""
    run = _SIMPLE_RUN[tabs]
    if not text.isascii():
        return run.match(text, start, end).end()  # type: ignore[union-attr]  # `*` always matches
    # Deleting the allowed bytes is ~5x faster than a regex scan; growing windows keep the
    # cost proportional to the distance to the first bad character.
    allowed = _SIMPLE_ASCII_BYTES[tabs]
    window = _FIRST_WINDOW_CHARS
    while start < end:
        stop = min(start + window, end)
        if text[start:stop].encode("ascii").translate(None, allowed):
            return run.match(text, start, stop).end()  # type: ignore[union-attr]
        start = stop
        window *= 2
    return end


def simple_run_end(text: str, start: int, tabs: bool = False, clean_end: int | None = None) -> int:
    """End of the longest run of complete simple lines at `start` (`start` if there is none).
    `clean_end`: text[start:clean_end] is known to hold nothing but simple characters and SGR
    (the run cannot go past it), which spares scanning it again."""
    if clean_end is None:
        end = first_bad_char(text, start, len(text), tabs)
        found = BAD_ESCAPE.search(text, start, end)
        if found:
            end = found.start()
    else:
        end = clean_end
    found = _BARE_CR.search(text, start, end)
    if found:
        end = found.start()
    if text.count("\n", start, end) != text.count("\r\n", start, end):
        newline = text.find("\n", start, end)
        while newline >= 0:
            if newline == start or text[newline - 1] != "\r":
                end = newline
                break
            newline = text.find("\n", newline + 1, end)
    last = text.rfind("\r\n", start, end)
    return start if last < 0 else last + 2


def is_simple_partial_line(text: str, start: int, tabs: bool = False) -> bool:
    """True if text[start:] could begin a simple line (no line feed yet, nothing else odd)."""
    if len(text) - start > FLOOD_DEFER_MAX_CHARS or text.find("\n", start) >= 0:
        return False
    if first_bad_char(text, start, len(text), tabs) != len(text):
        return False
    tail = text[start:]
    carriage = tail.find("\r")
    if carriage >= 0 and carriage != len(tail) - 1:
        return False
    body = tail[:-1] if carriage >= 0 else tail
    bad = BAD_ESCAPE.search(body)
    return bad is None or _PARTIAL_SGR.match(body, bad.start()) is not None


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


def screenful_start(text: str, start: int, end: int, rows_needed: int, columns: int) -> int:
    """Start of the shortest suffix of lines in text[start:end] giving `rows_needed` rows."""
    # A line takes a row at least, so the last `rows_needed` lines are all it can take; their
    # SGR goes in one pass over them (a pass a line cost a flood of coloured lines dear).
    starts: list[int] = []
    position = end
    while len(starts) < rows_needed and position > start:
        previous = text.rfind("\r\n", start, position - 2)
        position = previous + 2 if previous >= 0 else start
        starts.append(position)
    if not starts:
        return start
    tail = text[starts[-1] : end - 2]
    lines = (SGR_SEQUENCE.sub("", tail) if "\x1b" in tail else tail).split("\r\n")
    rows = 0
    for line_start, line in zip(starts, reversed(lines)):
        rows += line_rows(line, columns)
        if rows >= rows_needed:
            return line_start
    return start


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
