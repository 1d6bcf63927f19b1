"""Waiting on a condition with a deadline: what tests (and scripts) use instead of sleeps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

POLL_INTERVAL_S = 0.02


class WaitTimeout(AssertionError):
    """The condition never held; the message carries the last value seen, for the test report."""


def wait_until(predicate: Callable[[], T], *, timeout: float = 10.0, interval: float = POLL_INTERVAL_S,
               message: str = "condition") -> T:
    """Call `predicate` until it returns something truthy; return that value."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"{message} not met within {timeout}s; last value: {last!r}")
        time.sleep(interval)


async def async_wait_until(predicate: Callable[[], Awaitable[T]], *, timeout: float = 10.0,
                           interval: float = POLL_INTERVAL_S, message: str = "condition") -> T:
    deadline = time.monotonic() + timeout
    while True:
        last = await predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"{message} not met within {timeout}s; last value: {last!r}")
        await asyncio.sleep(interval)
