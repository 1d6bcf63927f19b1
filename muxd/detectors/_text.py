"""Small text helpers shared by detectors: numbers and durations as agents print them, and
a memo of per-line parses (detection reads mostly the same lines again and again)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_COUNT = re.compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([kKmM]?)\s*$")
_DURATION_PART = re.compile(r"(\d+)\s*([hms])")


def parse_count(text: str) -> int | None:
    """'4.8k' -> 4800, '1,234' -> 1234, '2M' -> 2000000; None if it is not a count."""
    match = _COUNT.match(text)
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(round(value * scale))


def parse_duration(text: str) -> int | None:
    """'12s' -> 12, '1m 5s' -> 65, '2h 3m' -> 7380; None if no duration is there."""
    parts = _DURATION_PART.findall(text)
    if not parts:
        return None
    factor = {"h": 3600, "m": 60, "s": 1}
    return sum(int(n) * factor[unit] for n, unit in parts)


# Distinct lines a LineMemo remembers before it starts afresh: a few screens' worth, so a
# scrolling pane keeps hitting while a flood of new lines cannot grow it without bound.
LINE_MEMO_MAX = 4096


class LineMemo(dict):  # type: ignore[type-arg]
    """The results of a pure function of one screen line, by the line's text.

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
