"""When a usage limit resets, from the words an agent draws: `reset_at(text, now)`. Pure: the
caller passes the time.

The forms the CLIs installed here draw (see tests/detector_data/usage_limits/):

- Claude Code 2.1.330: "resets 9:21pm (UTC)", "resets Dec 1, 6:41pm (UTC)", "limit resets 6:28pm"
- Codex 0.169.0: "try again at 8:35 PM.", "try again at Dec 1st, 2026 1:56 AM."
- Gemini CLI 0.61.0: "Access resets at 6:32 PM UTC.", "Please retry in 400s."

and the other common ones: "in 2h 13m", "in 5 minutes", an ISO 8601 date and time. A time is
read only after words that say it is when the limit ends (`resets`, `try again at`, `retry
in`…), never anywhere in a line: "Resumed at 3pm" is no reset.

A clock time with no date is the next such time: the agent says "resets 3pm" of the coming
3pm. The agents show the reset to the minute, rounded down (a reset at 18:23:40 is drawn
"6:23 PM" from 18:22:40 on), so the minute shown is still "now" until it has passed, not the
same minute tomorrow: a clock time up to CLOCK_SLACK_S in the past is today's. A date with no
year is the next such date likewise. Times are in the time zone the agent names ("(UTC)",
"(America/New_York)"), else in local time: the agent runs on this machine, and an abbreviation
("CET", "PST") names no zone for sure.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime, timedelta, timezone, tzinfo

CLOCK_SLACK_S = 60.0  # a clock time shown to the minute is that minute's until it has passed
_DAY_S = 86_400.0

# The words after which a reset time comes.
_LEAD = (
    r"(?i)\b(?:resets?(?:\s+(?:at|on|in))?|try\s+again\s+(?:at|in|after)|retry\s+(?:in|after)"
    r"|available\s+(?:again\s+)?(?:at|in)|continu(?:e|ing)\s+automatically\s+at|until)\s+")
_MONTHS = {name: number for number, names in enumerate(
    (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")), start=1) for name in names}
_ISO = (r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<clock>\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)"
        r"(?P<offset>Z|[+-]\d{2}:?\d{2})?")
_UNITS = {"d": _DAY_S, "day": _DAY_S, "days": _DAY_S, "h": 3600.0, "hr": 3600.0, "hrs": 3600.0,
          "hour": 3600.0, "hours": 3600.0, "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0,
          "minutes": 60.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "ms": 0.001}
_UNIT_NAMES = "|".join(sorted(_UNITS, key=len, reverse=True))
_DURATION_PART = rf"(?i)(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>{_UNIT_NAMES})\b"
_DURATION = rf"(?i)(?:\d+(?:\.\d+)?\s*(?:{_UNIT_NAMES})\b(?:\s*,?\s*(?:and\s+)?)?)+"
_CLOCK = r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[aApP]\.?\s?[mM]\b\.?)?"
_DATE = r"(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s*(?:(?P<year>\d{4}),?\s*)?"
_ZONE = r"(?:\s*\(?(?P<zone>UTC|GMT|Z|[A-Za-z]+(?:/[A-Za-z0-9_+-]+)+|[A-Z]{2,5})\b\)?)?"
_DATED = rf"{_DATE}(?:(?:at\s+)?{_CLOCK})?{_ZONE}"
_CLOCK_ONLY = rf"{_CLOCK}{_ZONE}"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """The patterns above, compiled at their first use, not at the daemon's start: its first
    reply waits on every module it imports, and none is needed before a usage limit shows."""
    return re.compile(pattern)


def reset_at(text: str, now: float) -> float | None:
    """Epoch seconds of the reset `text` names after its reset words (the first one that
    reads), or None when it names none. `now` (epoch seconds) anchors relative and partial times."""
    for lead in _compiled(_LEAD).finditer(text):
        found = _time_at(text[lead.end():], now)
        if found is not None:
            return found
    return None


def _time_at(rest: str, now: float) -> float | None:
    """The time `rest` starts with, if any."""
    iso = _compiled(_ISO).match(rest)
    if iso:
        return _iso(iso)
    duration = _compiled(_DURATION).match(rest)
    if duration:
        seconds = sum(float(part.group("number")) * _UNITS[part.group("unit").lower()]
                      for part in _compiled(_DURATION_PART).finditer(duration.group(0)))
        return now + seconds
    dated = _compiled(_DATED).match(rest)
    if dated and dated.group("month").lower() in _MONTHS:
        return _dated(dated, now)
    clock = _compiled(_CLOCK_ONLY).match(rest)
    if clock and (clock.group("minute") or clock.group("half")):  # a bare "3" is no time
        return _clock(clock, now)
    return None


def _iso(match: re.Match[str]) -> float | None:
    offset = match.group("offset") or ""
    text = f"{match.group('date')}T{match.group('clock')}{'+00:00' if offset == 'Z' else offset}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.timestamp()  # naive: local time


def _hour_minute(match: re.Match[str]) -> tuple[int, int] | None:
    hour, minute = int(match.group("hour")), int(match.group("minute") or 0)
    half = (match.group("half") or "").lower().replace(".", "").replace(" ", "")
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def _zone(name: str | None) -> tzinfo | None:
    """The zone `name` names for sure; None for local time (no name, or an abbreviation)."""
    if name is None:
        return None
    if name.upper() in ("UTC", "GMT", "Z"):
        return timezone.utc
    if "/" in name:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # at the first named zone, not at every start

        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            return None
    return None


def _at(day: date, hour: int, minute: int, zone: tzinfo | None) -> float:
    moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
    return moment.timestamp()  # naive (zone None): local time, daylight saving included


def _today(now: float, zone: tzinfo | None) -> date:
    return datetime.fromtimestamp(now, zone).date() if zone is not None else datetime.fromtimestamp(now).date()


def _clock(match: re.Match[str], now: float) -> float | None:
    found = _hour_minute(match)
    if found is None:
        return None
    zone = _zone(match.group("zone"))
    today = _today(now, zone)
    at = _at(today, *found, zone)
    if at < now - CLOCK_SLACK_S:
        at = _at(today + timedelta(days=1), *found, zone)
    return at


def _dated(match: re.Match[str], now: float) -> float | None:
    hour_minute = _hour_minute(match) if match.group("hour") else (0, 0)
    if hour_minute is None:
        return None
    zone = _zone(match.group("zone"))
    month, day = _MONTHS[match.group("month").lower()], int(match.group("day"))
    year = int(match.group("year")) if match.group("year") else _today(now, zone).year
    try:
        at = _at(date(year, month, day), *hour_minute, zone)
        if match.group("year") is None and at < now - _DAY_S:  # December's "Jan 2": next year's
            at = _at(date(year + 1, month, day), *hour_minute, zone)
    except ValueError:  # Feb 30
        return None
    return at

