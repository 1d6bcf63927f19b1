"""What flood skipping (flood.py, ghostty_flood.py) looks for in output text: runs of simple lines
(printable text and SGR, each ended by CRLF), found by scanning the text alone, whichever
emulator then takes the rest: nothing here knows a screen.
"""

from __future__ import annotations

import functools
import re

from .line_layout import SGR_SEQUENCE, line_rows

# Simple lines followed by other output are only skipped in runs at least this long.
FLOOD_MIN_CHARS = 4096
# Deferred flood text (last screenful + partial line) is emulated instead beyond this size.
FLOOD_DEFER_MAX_CHARS = 64 * 1024

# What simple lines are made of, besides SGR: printable text (ASCII, or U+00A0 on: no C1
# controls), CR, LF and ESC; tabs too when the tab stops are the default ones.
_SIMPLE_CHARS = " -~\r\n\x1b\xa0-\U0010ffff"  # a regex class body
_SIMPLE_ASCII = bytes([*b"\r\n\x1b", *range(0x20, 0x7F)])
_SIMPLE_ASCII_BYTES = {False: _SIMPLE_ASCII, True: _SIMPLE_ASCII + b"\t"}
_FIRST_WINDOW_CHARS = 1024
BAD_ESCAPE = re.compile(r"\x1b(?!\[[0-9;]*m)")
# Erase to the end of the line, as `grep --color` writes it around every match: the native
# skipper takes it in its stride where it provably changes nothing (ghostty_erase.py).
ERASE_LINE = "\x1b[K"
BAD_ESCAPE_BUT_ERASE = re.compile(r"\x1b(?!\[[0-9;]*m|\[K)")
_BARE_CR = re.compile(r"\r(?!\n)")
_PARTIAL_SGR = re.compile(r"\x1b(?:\[[0-9;]*)?\Z")


@functools.cache
def _simple_run(tabs: bool) -> re.Pattern[str]:
    """The regex of a run of simple characters: compiled at the first flood, as its class up to
    U+10FFFF takes milliseconds to compile that a daemon's start need not pay."""
    return re.compile(f"[\t{_SIMPLE_CHARS}]*" if tabs else f"[{_SIMPLE_CHARS}]*")


def first_bad_char(text: str, start: int, end: int, tabs: bool) -> int:
    """Where text[start:end] first has a character that cannot be in a simple line (or `end`)."""
    run = _simple_run(tabs)
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


def is_simple_partial_line(text: str, start: int, tabs: bool = False, erase: bool = False) -> bool:
    """True if text[start:] could begin a simple line (no line feed yet, nothing else odd);
    `erase`: ERASE_LINE counts as simple."""
    if len(text) - start > FLOOD_DEFER_MAX_CHARS or text.find("\n", start) >= 0:
        return False
    if first_bad_char(text, start, len(text), tabs) != len(text):
        return False
    tail = text[start:]
    carriage = tail.find("\r")
    if carriage >= 0 and carriage != len(tail) - 1:
        return False
    body = tail[:-1] if carriage >= 0 else tail
    bad = (BAD_ESCAPE_BUT_ERASE if erase else BAD_ESCAPE).search(body)
    return bad is None or _PARTIAL_SGR.match(body, bad.start()) is not None


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
    if len(starts) == rows_needed and tail.isascii() and "\t" not in tail and max(
            map(len, tail.split("\r\n"))) <= columns:
        return starts[-1]  # each line a row at most as long as its source: the last lines are the rows
    if "\x1b" in tail:  # an ERASE_LINE the native skipper took draws nothing
        tail = SGR_SEQUENCE.sub("", tail).replace(ERASE_LINE, "")
    lines = tail.split("\r\n")
    rows = 0
    for line_start, line in zip(starts, reversed(lines)):
        rows += line_rows(line, columns)
        if rows >= rows_needed:
            return line_start
    return start
