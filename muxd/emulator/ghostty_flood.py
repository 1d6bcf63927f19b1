"""Flood skipping on the native backend: flood.py's idea, for libghostty-vt.

A run of simple lines (printable text, SGR and CRLF; tabs too, see below) fed while the
cursor is at column 0 with only blank rows from there down, on the main screen with default
margins and modes, only scrolls into history. All but its last screenful go straight to the
compact store as source text (after the rows above the cursor), the native screen is cleared
with the pen the skipped SGR would leave, and the last screenful is kept back with the
partial line after it: the next read's lines may skip it too, and every read of the screen
emulates it first (`flush`). The pen and the margins are read back with DECRQSS.

Tabs count when the text is ASCII and the tab stops, read back through the formatter, are
the default ones: in ASCII muxd's layout of a tab is ghostty's (a combining mark after a tab,
or a wide character wrapping after one, lay out differently: tests/test_emulator_tmux.py).

Erase to the end of the line (`ESC [ K`, around every match `grep --color` writes) is taken
in a run's stride where it provably changes nothing (ghostty_erase.py); elsewhere it ends the run.

Not carried over: the character REP would repeat after a skip.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol

from .cell import BLANK
from .flood_text import (
    BAD_ESCAPE_BUT_ERASE, ERASE_LINE, FLOOD_DEFER_MAX_CHARS, FLOOD_MIN_CHARS, first_bad_char, is_simple_partial_line,
    screenful_start, simple_run_end,
)
from .ghostty_erase import erasing_changes_nothing
from .ghostty_format import ACTIVE
from .ghostty_history import NativeHistory
from .line_layout import SGR_SEQUENCE
from .source_block import advance_attrs, last_full_reset

# Modes that must be as a shell leaves them: (mode, ANSI?, wanted).
_MODES = ((7, False, True), (6, False, False), (5, False, False), (4, True, False), (20, True, False))
DECRQSS_REPLY = re.compile(rb"\x1bP1\$r([0-9;:]*)([mr])\x1b\\")  # a valid DECRQSS answer: (params, m|r)
_CHARSET_STATE = re.compile(r"\x1b[()][0-9A-Za-z]|[\x0e\x0f]")
_SGR_LOOKAHEAD_CHARS = 64  # longer SGRs across a probe's end read as bad (a shorter stretch)
_PEN_MAX_CHARS = 256  # a pen carried from skip to skip as the SGR that set it, at most this long


def pen_sequence(params: bytes) -> str:
    """The SGR sequence setting the pen DECRQSS reported (`48:5:200` read as `48;5;200`)."""
    return "\x1b[" + params.decode("ascii").replace("::", ";").replace(":", ";") + "m"


def long_stretches(text: str, tabs: bool) -> Iterator[tuple[int, int]]:
    """The stretches of `text` (start, end) at least FLOOD_MIN_CHARS long with nothing simple
    lines cannot hold (bare CRs and LFs aside: simple_run_end sees to those; ERASE_LINE
    counts as simple, NativeFloodSkipper.feed sees to it).

    Probed at aligned windows of half that length, each of which a stretch that long covers
    whole: in agent output full of cursor moves a probe stops at the first escape, so a read
    costs a search per 2 KiB instead of a scan per line (which cost more than emulating it)."""
    half = FLOOD_MIN_CHARS // 2
    size = len(text)
    window = 0
    while window + half <= size:
        if _unsimple_at(text, window, window + half, tabs) < window + half:
            window += half
            continue
        end = _unsimple_at(text, window + half, size, tabs)
        start = max(window - half, 0)
        while (bad := _unsimple_at(text, start, window, tabs)) < window:
            start = bad + 1  # past it: the rest of an escape is text simple lines may hold
        if end - start >= FLOOD_MIN_CHARS:
            yield start, end
        window = -(-(end + 1) // half) * half  # the first aligned window after it


def _unsimple_at(text: str, start: int, stop: int, tabs: bool) -> int:
    """The first position in text[start:stop] that simple lines cannot hold (or `stop`): a
    character (first_bad_char, fast on ASCII), or an escape other than SGR and ERASE_LINE."""
    # Escapes first: agent output moves the cursor every few lines, so the search for a bad
    # character (a regex scan on non-ASCII text) stops at the first move, not at the window's
    # end. Looked for a little past `stop`: an SGR running across it is not an escape cut short.
    bad = BAD_ESCAPE_BUT_ERASE.search(text, start, min(stop + _SGR_LOOKAHEAD_CHARS, len(text)))
    if bad is not None and bad.start() < stop:
        stop = bad.start()
    return first_bad_char(text, start, stop, tabs)


class NativeScreen(Protocol):
    """What the skipper asks of its emulator (ghostty_backend.GhosttyEmulator, which builds it)."""

    @property
    def columns(self) -> int: ...

    @property
    def lines(self) -> int: ...

    @property
    def cursor(self) -> tuple[int, int]: ...

    @property
    def alternate_screen(self) -> bool: ...

    def query(self, request: bytes, answer: re.Pattern[bytes]) -> list[tuple[bytes, ...]]: ...

    def pen(self) -> str | None: ...


class NativeFloodSkipper:
    """Skips provable scroll-only floods for one `GhosttyEmulator` (module docstring).

    `history` is the emulator's, which the skipper feeds and reads; `mode(number, ansi)` says
    whether the native terminal has a mode set."""

    def __init__(self, emulator: NativeScreen, history: NativeHistory, mode: Callable[[int, bool], bool]) -> None:
        self._emulator = emulator
        self._history = history
        self._mode = mode
        self.skipped_chars = 0
        self._deferred = ""  # a flood's last screenful and partial line, not emulated yet (flush)
        self._default_stops: dict[int, str] = {}  # columns -> the tab stops every 8 columns set
        # After a skip, the screen is what it left (blank, cursor home, default modes) until
        # program output is written again: (history.writes then, the pen it left, whether
        # the tab stops were the default ones, None if not read).
        self._after_skip: tuple[int, str, bool | None] | None = None

    def _unchanged_since_skip(self) -> tuple[int, str, bool | None] | None:
        """What the last skip left, if no program output was written since (else None)."""
        after = self._after_skip
        return after if after is not None and after[0] == self._history.writes else None

    def _tab_stops_are_default(self) -> bool:
        columns = self._emulator.columns
        default = self._default_stops.get(columns)
        if default is None:
            default = self._default_stops[columns] = "\x1b[3g" + "".join(
                f"\x1b[{column}G\x1bH" for column in range(9, columns + 1, 8))
        return self._history.formatter.tab_stops(columns) == default

    def flush(self) -> None:
        """Emulate the text a flood left deferred (every read of the emulator does this first)."""
        if self._deferred:
            text, self._deferred = self._deferred, ""
            self._history.feed(text.encode("utf-8", "surrogateescape"))

    def feed(self, data: bytes, decoded: str | None = None) -> None:
        """Emulate or skip `data` (`decoded`: the same as text, if the caller has it)."""
        history = self._history
        deferred = self._deferred
        # Short, or on the alternate screen (never skipped: _skippable_pen), where a full-screen
        # TUI's every redraw would be searched for stretches in vain.
        if not deferred and (len(data) < FLOOD_MIN_CHARS or history.alternate()):
            history.feed(data)
            return
        text = data.decode("utf-8", "surrogateescape") if decoded is None else decoded
        if deferred:
            text = deferred + text
        self._deferred = ""
        tabs = text.isascii() and "\t" in text  # runs may hold tabs: checked against the stops below
        # Nothing written since the last skip: what it left (cursor home among others) holds.
        fresh = self._unchanged_since_skip() is not None
        at_line_start = fresh or self._emulator.cursor[0] == 0
        done = 0  # text[:done] is fed (or skipped)
        for start, end in long_stretches(text, tabs):
            # Runs begin at a line's start: the stretch's, or the first one in it.
            if start == 0:
                position = 0 if at_line_start else text.find("\n", 0, end) + 1
            else:
                position = start if text[start - 1] == "\n" else text.find("\n", start, end) + 1
            while 0 < position or start == 0 == position and at_line_start:
                if end - position < FLOOD_MIN_CHARS:
                    break
                run_end = simple_run_end(text, position, tabs, clean_end=end)
                if run_end - position >= FLOOD_MIN_CHARS:
                    history.feed(text[done:position].encode("utf-8", "surrogateescape"))
                    done = position
                    unchanged = self._unchanged_since_skip()
                    tabs_default = unchanged[2] if unchanged else None  # None: not read back yet
                    if tabs and text.find("\t", position, run_end) >= 0:
                        if tabs_default is None:
                            tabs_default = self._tab_stops_are_default()
                        if not tabs_default:
                            run_end = simple_run_end(text, position, False)  # the program set its own stops
                    if run_end - position < FLOOD_MIN_CHARS:
                        pen = None
                    else:
                        pen = unchanged[1] if unchanged else self._skippable_pen()
                    erase = text.find(ERASE_LINE, position, run_end)
                    if pen is not None and erase >= 0 and not erasing_changes_nothing(
                            text[position:run_end], self._emulator.columns, pen):
                        run_end = simple_run_end(text, position, tabs, clean_end=erase)  # the lines before it
                        pen = pen if run_end - position >= FLOOD_MIN_CHARS else None
                    if pen is not None:
                        done = self._skip(text, position, run_end, pen, tabs_default, fresh=unchanged is not None)
                        if (len(text) - done <= FLOOD_DEFER_MAX_CHARS
                                and is_simple_partial_line(text, run_end, tabs, erase=True)):
                            # All that is left is the run's last screenful and a simple partial
                            # line: kept back, the next read's lines may skip it (as flood.py does).
                            self._deferred = text[done:]
                            return
                newline = text.find("\n", max(run_end, position), end)
                if newline < 0:
                    break
                position = newline + 1
        # Nothing skipped (most reads of agent output): the bytes as they came, not encoded again.
        history.feed(data if done == 0 and not deferred else text[done:].encode("utf-8", "surrogateescape"))

    def _skippable_pen(self) -> str | None:
        """The pen as an SGR sequence when a flood fed now may be skipped, else None."""
        emulator = self._emulator
        history = self._history
        if emulator.alternate_screen or not history.at_ground() or emulator.cursor[0] != 0:
            return None
        mode = self._mode
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

    def _skip(self, text: str, start: int, run_end: int, pen: str, tabs_default: bool | None, *,
              fresh: bool) -> int:
        """Send all but the last screenful of text[start:run_end] to history; return where
        the rest begins. `fresh`: the screen is as the last skip left it (blank, cursor home,
        nothing to drain), so only a changed pen is written."""
        emulator = self._emulator
        history = self._history
        lines, columns = emulator.lines, emulator.columns
        keep_from = screenful_start(text, start, run_end, lines - 1, columns)
        if keep_from == start:
            return start
        skipped = text[start:keep_from]
        self.skipped_chars += len(skipped)
        if ERASE_LINE in skipped:  # each one changes nothing here (feed made sure): the layout has none
            skipped = skipped.replace(ERASE_LINE, "")
        cursor_y = 0
        if not fresh:
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
            last_reset = last_full_reset(skipped)
            pens = ["\x1b[0m"] if last_reset >= 0 else pens
            pens += [f"\x1b[{params}m" for params in SGR_SEQUENCE.findall(skipped, max(last_reset, 0))]
        pen_now = "".join(pens)
        if not fresh:
            history.write_raw(("\x1b[0m\x1b[2J\x1b[H" + pen_now).encode("ascii"))
        elif pen_now != pen:
            history.write_raw(("\x1b[0m" + pen_now).encode("ascii"))
        if len(pen_now) > _PEN_MAX_CHARS:  # SGR after SGR with no reset: ask for the pen in short
            pen_now = self._emulator.pen() or ""
        self._after_skip = (history.writes, pen_now, tabs_default) if pen_now else None
        return keep_from
