"""Small text helpers shared by detectors: numbers and durations as agents print them, the
text of an input box from its rows, and a memo of per-line parses (detection reads mostly the
same lines again and again)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from muxd.detectors._lazy_re import lazy_compile

_COUNT = lazy_compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([kKmM]?)\s*$")
_DURATION_PART = lazy_compile(r"(\d+)\s*([hms])")


def parse_count(text: str) -> int | None:
    """'4.8k' -> 4800, '1,234' -> 1234, '2M' -> 2000000; None if it is not a count."""
    match = _COUNT.match(text)
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    return int(round(value * _SCALES[match.group(2).lower()]))


_SCALES = {"": 1, "k": 1_000, "m": 1_000_000}
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> int | None:
    """'12s' -> 12, '1m 5s' -> 65, '2h 3m' -> 7380; None if no duration is there."""
    parts = _DURATION_PART.findall(text)
    if not parts:
        return None
    return sum(int(n) * _UNIT_SECONDS[unit] for n, unit in parts)


def join_input_rows(rows: Sequence[str], width: int, *, word_wrap: bool = True) -> str | None:
    """The text of an input box from its rows (box margins already taken off), None if it is
    empty. A row the box wrapped (its text plus the next row's first word would not have fit
    in `width`; with `word_wrap=False`, a row filling `width`) goes on with the next row; any
    other row ends a line of the input, and lines are joined by "\\n"."""
    text = ""
    for index, row in enumerate(rows):
        if index:
            previous = rows[index - 1]
            if word_wrap:
                next_word = row.split(" ", 1)[0]
                wrapped = bool(next_word) and len(previous.rstrip()) + 1 + len(next_word) > width
                text += " " if wrapped else "\n"
            elif len(previous) < width:
                text += "\n"
        text += row.rstrip() if word_wrap else row
    text = text.strip()
    return text or None


# Distinct lines a LineMemo remembers before it starts afresh: a few screens' worth, so a
# scrolling pane keeps hitting while a flood of new lines cannot grow it without bound.
LINE_MEMO_MAX = 4096


class LineMemo(dict):  # type: ignore[type-arg]
    """The results of a pure function of one screen line, by the line's text (or of any
    hashable key, e.g. a foreground process's name and argv).

    A detector looks at a pane ten times a second and most of its rows are the same text as
    last time (the same str objects even, whose hashes Python keeps), so what it parses per
    line is worth remembering: a hit is one dict lookup instead of regexes."""

    def __init__(self, parse: Callable[[str], Any], limit: int = LINE_MEMO_MAX) -> None:
        super().__init__()
        self.parse = parse
        self.limit = limit

    def __missing__(self, line: str) -> Any:
        if len(self) >= self.limit:
            self.clear()
        value = self[line] = self.parse(line)
        return value


class FrameMemo:
    """The result of a pure function of a whole screen, for the last screen it was asked about.

    The runner asks every detector's `identify` and then one `detect` about the same frame,
    and each starts from the same work (the rows with trailing blanks cut, where the last row
    is): the second asker gets the first one's answer. The screen is compared by value (a
    copy is kept), so a caller that reuses its list for the next frame is never misled."""

    def __init__(self, compute: Callable[[list[str]], Any]) -> None:
        self.compute = compute
        self._last: tuple[list[str] | None, Any] = (None, None)

    def __call__(self, lines: Sequence[str]) -> Any:
        key, value = self._last  # one read: the pair is replaced whole, never half-updated
        rows = lines if type(lines) is list else list(lines)
        if rows == key:
            return value
        value = self.compute(rows)
        self._last = (rows.copy(), value)
        return value


def _stripped(lines: list[str]) -> list[str]:
    return [line.rstrip() for line in lines]


# Every row with its trailing blanks cut, as the CLI detectors read them. Callers must not
# change the list they get: the next asker about the same screen gets the same one.
stripped_rows = FrameMemo(_stripped)

# The rows joined by line feeds: one substring test tells whether some words are on the
# screen at all, before a pattern is tried row by row. No row holds a line feed, so a test
# for words without one finds exactly the rows that hold them.
screen_text = FrameMemo("\n".join)


# `Session ID:  <uuid>` (Claude Code's /status, Gemini CLI's /stats) or `Session:  <uuid>`
# (Codex's /status): a session id as the CLIs' status panels show it.
_SESSION_ID = lazy_compile(r"\bSession(?: ID)?:\s+(?P<id>[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\b")


def _shown_session_id(lines: list[str]) -> str | None:
    text = screen_text(lines)
    if "Session" not in text:
        return None  # no panel on screen: no row need be looked at
    found = _SESSION_ID.findall(text)
    return found[-1] if found else None


# The session id a status panel on screen shows (the lowest, if several), or None.
shown_session_id = FrameMemo(_shown_session_id)
