"""Flood skipping on the native backend: flood.py's idea, for libghostty-vt.

A run of simple lines (printable text, SGR and CRLF; no tabs, as ghostty's tab stops cannot
be read back) fed while the cursor is at column 0 with only blank rows from there down, on
the main screen with default margins and modes, only scrolls into history. All but its last
screenful go straight to the compact store as source text (after the rows above the
cursor), the native screen is cleared with the pen the skipped SGR would leave, and only
the last screenful is emulated. The pen and the margins are read back with DECRQSS.

Not carried over: the character REP would repeat after a skip.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .cell import BLANK
from .flood import FLOOD_MIN_CHARS, screenful_start, simple_run_end
from .ghostty_format import ACTIVE
from .line_layout import SGR_SEQUENCE
from .source_block import FULL_RESETS, advance_attrs

if TYPE_CHECKING:
    from .ghostty_backend import GhosttyEmulator

# Modes that must be as a shell leaves them: (mode, ANSI?, wanted).
_MODES = ((7, False, True), (6, False, False), (5, False, False), (4, True, False), (20, True, False))
DECRQSS_REPLY = re.compile(rb"\x1bP1\$r([0-9;:]*)([mr])\x1b\\")  # a valid DECRQSS answer: (params, m|r)
_CHARSET_STATE = re.compile(r"\x1b[()][0-9A-Za-z]|[\x0e\x0f]")


def pen_sequence(params: bytes) -> str:
    """The SGR sequence setting the pen DECRQSS reported (`48:5:200` read as `48;5;200`)."""
    return "\x1b[" + params.decode("ascii").replace("::", ";").replace(":", ";") + "m"


class NativeFloodSkipper:
    """Skips provable scroll-only floods for one `GhosttyEmulator` (module docstring)."""

    def __init__(self, emulator: GhosttyEmulator) -> None:
        self._emulator = emulator
        self.skipped_chars = 0

    def feed(self, data: bytes) -> None:
        history = self._emulator._history
        if len(data) < FLOOD_MIN_CHARS:
            history.feed(data)
            return
        text = data.decode("utf-8", "surrogateescape")
        position = 0 if self._emulator.cursor[0] == 0 else text.find("\n") + 1  # where a run may start
        done = 0  # text[:done] is fed (or skipped)
        while len(text) - position >= FLOOD_MIN_CHARS:
            run_end = simple_run_end(text, position)
            if run_end - position >= FLOOD_MIN_CHARS:
                history.feed(text[done:position].encode("utf-8", "surrogateescape"))
                done = position
                pen = self._skippable_pen()
                if pen is not None:
                    done = self._skip(text, position, run_end, pen)
            newline = text.find("\n", max(run_end, position))
            if newline < 0:
                break
            position = newline + 1
        history.feed(text[done:].encode("utf-8", "surrogateescape"))

    def _skippable_pen(self) -> str | None:
        """The pen as an SGR sequence when a flood fed now may be skipped, else None."""
        emulator = self._emulator
        history = emulator._history
        if emulator.alternate_screen or not history.at_ground() or emulator.cursor[0] != 0:
            return None
        mode = emulator._term.mode
        if any(mode(number, ansi) != wanted for number, ansi, wanted in _MODES):
            return None
        x, y = emulator.cursor
        lines, columns = emulator.lines, emulator.columns
        below = history.formatter.format(ACTIVE, y, lines - 1, columns, vt=True, unwrap=False, charsets=True)
        if "\x1b(0" in below or "\x0e" in below or _CHARSET_STATE.sub("", below):
            return None  # line drawing in effect, or something below the cursor (styled blanks count)
        replies = {final: params for params, final in emulator.query(b"\x1bP$qm\x1b\\\x1bP$qr\x1b\\", DECRQSS_REPLY)}
        if replies.get(b"r") != f"1;{lines}".encode() or b"m" not in replies:
            return None
        return pen_sequence(replies[b"m"])

    def _skip(self, text: str, start: int, run_end: int, pen: str) -> int:
        """Send all but the last screenful of text[start:run_end] to history; return where
        the rest begins."""
        emulator = self._emulator
        history = emulator._history
        lines, columns = emulator.lines, emulator.columns
        keep_from = screenful_start(text, start, run_end, lines - 1, columns)
        if keep_from == start:
            return start
        skipped = text[start:keep_from]
        history.drain()
        cursor_y = emulator.cursor[1]
        if cursor_y:
            history.copy_rows(ACTIVE, 0, cursor_y - 1)
        start_attrs = advance_attrs(BLANK, pen, BLANK)
        has_sgr = "\x1b" in skipped
        end_attrs = advance_attrs(start_attrs, skipped, BLANK) if has_sgr else start_attrs
        history.store.append_source(skipped, has_sgr, columns, start_attrs, end_attrs, BLANK)
        # A fresh screen, the cursor home, then the pen the skipped SGR leave.
        pens = [pen]
        if has_sgr:
            last_reset = max(skipped.rfind(reset) for reset in FULL_RESETS)
            pens = ["\x1b[0m"] if last_reset >= 0 else pens
            pens += [f"\x1b[{params}m" for params in SGR_SEQUENCE.findall(skipped, max(last_reset, 0))]
        history.write_raw(("\x1b[0m\x1b[2J\x1b[H" + "".join(pens)).encode("ascii"))
        self.skipped_chars += len(skipped)
        return keep_from
