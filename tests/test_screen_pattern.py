"""wait_for's caller patterns: RE2, what is refused and why, bounded text per check."""

from __future__ import annotations

import asyncio
import time

import pytest

from muxd.errors import BadRequest
from muxd.mcp_server.limits import WAIT_PATTERN_MAX_CHARS, WAIT_PATTERN_PROGRAM_MAX, WAIT_SCREEN_MAX_CHARS
from muxd.mcp_server.screen_pattern import ScreenPattern
from muxd.testing.patience import stretched


def _refusal(pattern: str) -> str:
    with pytest.raises(BadRequest) as caught:
        ScreenPattern(pattern)
    assert caught.value.detail == {"field": "pattern"}
    assert "\n" not in caught.value.message
    return caught.value.message


def test_finds_the_bottom_most_matching_line() -> None:
    pattern = ScreenPattern(r"^done-(?P<n>\d+)$")
    assert pattern.last_matching_line_sync("$ run\ndone-1\nx\ndone-2\n$ ") == "done-2"
    assert pattern.last_matching_line_sync("nothing here\n") is None
    assert asyncio.run(pattern.last_matching_line("a\ndone-7")) == "done-7"


def test_a_catastrophic_pattern_is_answered_at_once() -> None:
    # Python's re would explore 2^60 ways here; RE2 answers in linear time.
    assert ScreenPattern(r"^(a|aa)+$x").last_matching_line_sync("a" * 60) is None


def test_refuses_what_cannot_run_in_linear_time_with_one_line_each() -> None:
    assert "linear time" in _refusal(r"(a)\1") and "backreferences" in _refusal(r"(a)\1")
    assert "linear time" in _refusal(r"foo(?=bar)")
    assert "linear time" in _refusal(r"(?<!x)y")
    assert "not a valid regex" in _refusal("(")
    assert "too complex" in _refusal("(?:.?){100}x") and str(WAIT_PATTERN_PROGRAM_MAX) in _refusal("a{1000}")
    # A huge program is refused without being compiled in full (that took ~1 s on the event loop).
    started = time.monotonic()
    assert "too complex" in _refusal("|".join([r"(?i)\w{1,999}"] * 10))
    assert time.monotonic() - started < stretched(0.5)  # in machine time: ~1 s idle when compiled in full
    assert "1-1000 characters" in _refusal("") and "characters" in _refusal("a" * (WAIT_PATTERN_MAX_CHARS + 1))


def test_looks_at_most_the_bottom_of_a_huge_screen() -> None:
    pattern = ScreenPattern(r"^needle$")
    filler = ("x" * 99 + "\n") * (WAIT_SCREEN_MAX_CHARS // 100 + 10)
    assert pattern.last_matching_line_sync("needle\n" + filler) is None
    assert pattern.last_matching_line_sync(filler + "needle\n") == "needle"
    # A line cut by the limit is dropped, not matched in part.
    assert ScreenPattern(r"^x{5}$").last_matching_line_sync("y" + "x" * 5 + "\n" * (WAIT_SCREEN_MAX_CHARS - 5)) is None
