"""`reset_at`: the reset time in the words the agents draw, in the zone they name or local time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

import pytest

from muxd.detectors.reset_time import CLOCK_SLACK_S, reset_at

# Saturday 28 November 2026, 18:22:32 UTC.
NOW = datetime(2026, 11, 28, 18, 22, 32, tzinfo=timezone.utc).timestamp()


def utc(text: str) -> str | None:
    found = reset_at(text, NOW)
    return None if found is None else datetime.fromtimestamp(found, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


@pytest.mark.parametrize("text, expected", [
    # Claude Code: a clock time in the zone it names; a date and a clock time
    ("You've hit your 5-hour limit · resets 9:21pm (UTC)", "2026-11-28 21:21:00"),
    ("You've hit your weekly limit · resets Dec 1, 6:41pm (UTC)", "2026-12-01 18:41:00"),
    ("resets 12:05 AM (America/New_York)", "2026-11-29 05:05:00"),
    # Gemini CLI: its zone after the time; a wait in seconds from now
    ("Access resets at 6:32 PM UTC.", "2026-11-28 18:32:00"),
    ("Please retry in 400s.", "2026-11-28 18:29:12"),
    ("Please retry in 37.01s.", "2026-11-28 18:23:09"),
    # durations and ISO 8601 times
    ("resets in 2h 13m", "2026-11-28 20:35:32"),
    ("try again in 5 minutes", "2026-11-28 18:27:32"),
    ("try again in 1 hour and 20 minutes", "2026-11-28 19:42:32"),
    ("resets 2026-11-29T03:00:00Z", "2026-11-29 03:00:00"),
    ("resets at 2026-11-29T03:00:00+02:00", "2026-11-29 01:00:00"),
    # no reset said, or a time not after the words for it
    ("You've hit your usage limit. Upgrade to Pro or try again later.", None),
    ("API Error: Request rejected (429) · Rate limited", None),
    ("Resumed at 3pm (UTC)", None),
    ("resets 3 (UTC)", None),
    ("resets 25:10 (UTC)", None),
    ("resets Feb 30, 1pm (UTC)", None),
])
def test_the_reset_the_words_name(text: str, expected: str | None) -> None:
    assert utc(text) == expected


def test_a_clock_time_is_the_next_such_time() -> None:
    # 6:21pm has just passed (18:22:32): tomorrow's. 3pm: tomorrow's. 9pm: today's.
    assert utc("resets 6:21pm (UTC)") == "2026-11-29 18:21:00"
    assert utc("resets 3pm (UTC)") == "2026-11-29 15:00:00"
    assert utc("resets 9pm (UTC)") == "2026-11-28 21:00:00"


def test_the_minute_shown_is_still_now_until_it_has_passed() -> None:
    # A reset at 18:22:50 is drawn "6:22pm" from 18:21:50 on: it means now, not tomorrow.
    assert utc("resets 6:22pm (UTC)") == "2026-11-28 18:22:00"
    later = NOW + CLOCK_SLACK_S + 30  # 18:24:02: the same words name tomorrow's 6:22pm
    found = reset_at("resets 6:22pm (UTC)", later)
    assert found is not None and datetime.fromtimestamp(found, timezone.utc).day == 29


def test_a_date_without_a_year_is_the_next_such_date() -> None:
    assert utc("resets Jan 2, 9am (UTC)") == "2027-01-02 09:00:00"
    assert utc("resets Nov 28, 9pm (UTC)") == "2026-11-28 21:00:00"
    assert utc("try again at Dec 1st, 2026 1:56 AM.") is not None


def test_times_without_a_zone_are_local(local_zone: Callable[[str], None]) -> None:
    local_zone("America/New_York")  # UTC-5 in November
    # Codex words its reset in local time: 8:35 PM in New York is 01:35 UTC the next day.
    assert utc("try again at 8:35 PM.") == "2026-11-29 01:35:00"
    assert utc("try again at Dec 1st, 2026 1:56 AM.") == "2026-12-01 06:56:00"
    # An abbreviation names no zone for sure: local time, as the agent runs here.
    assert utc("Access resets at 6:32 PM EST.") == "2026-11-28 23:32:00"
    # ISO without an offset: local too.
    assert utc("resets 2026-11-29T03:00:00") == "2026-11-29 08:00:00"
