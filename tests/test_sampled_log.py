"""SampledLog: the first event logged at once, the rest as one count per interval (injected clock),
and the count logged by the loop's timer when the interval ends. FailureStreak: a streak of failures
is one line, and its end another."""

from __future__ import annotations

import asyncio
import logging

import pytest

from muxd.sampled_log import FailureStreak, SampledLog
from muxd.testing.wait import async_wait_until

log = logging.getLogger("muxd.test.sampled")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == log.name]


def test_a_flood_is_one_line_then_one_count_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=log.name)
    clock = FakeClock()
    sampled = SampledLog(log, logging.WARNING, "refused a token", interval_s=60, clock=clock)
    sampled.event(" (sha256:abc)")
    for _ in range(500):
        clock.now += 0.01
        sampled.event(" (sha256:def)")
    assert _lines(caplog) == ["refused a token (sha256:abc)"]
    clock.now += 60  # the next event after the interval: the count of the held ones, then itself
    sampled.event(" (sha256:ghi)")
    assert _lines(caplog)[1:] == ["refused a token: 500 more in the last 65 s", "refused a token (sha256:ghi)"]
    sampled.event()
    sampled.flush()  # e.g. at shutdown: nothing counted is lost
    assert _lines(caplog)[3:] == ["refused a token: 1 more in the last 0 s"]
    sampled.flush()
    assert len(_lines(caplog)) == 4


def test_the_count_is_logged_when_the_interval_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=log.name)

    async def scenario() -> None:
        sampled = SampledLog(log, logging.WARNING, "refused a token", interval_s=0.2)
        for _ in range(50):
            sampled.event()

        async def counted() -> bool:
            return len(_lines(caplog)) == 2

        await async_wait_until(counted, timeout=5, message="the count after the interval")
        assert _lines(caplog)[1].startswith("refused a token: 49 more in the last")

    asyncio.run(scenario())


def test_a_streak_of_failures_is_one_line_and_its_end_another(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=log.name)
    streak = FailureStreak(log, "writing the heartbeat")
    streak.succeeded()  # nothing failed: nothing to say
    for n in range(300):
        streak.failed(f"the database cannot be reached ({n})")
    streak.succeeded()
    streak.succeeded()
    streak.failed("the database is full")
    assert _lines(caplog) == [
        "writing the heartbeat: the database cannot be reached (0) (tried again quietly until it works)",
        "writing the heartbeat works again after 300 failure(s)",
        "writing the heartbeat: the database is full (tried again quietly until it works)"]
