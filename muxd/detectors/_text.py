"""Small text helpers shared by detectors: numbers and durations as agents print them."""

from __future__ import annotations

import re

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
