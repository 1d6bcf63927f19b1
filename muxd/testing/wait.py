"""Waiting on a condition with a deadline: what tests (and scripts) use instead of sleeps. Every
`timeout` here is a budget of machine time (patience.Deadline): it stretches while the machine
is loaded, and its failure says how long it waited at what load."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from muxd.testing.patience import Deadline

T = TypeVar("T")

POLL_INTERVAL_S = 0.02


class WaitTimeout(AssertionError):
    """The condition never held; the message carries the last value seen, for the test report."""


def wait_until(predicate: Callable[[], T], *, timeout: float = 10.0, interval: float = POLL_INTERVAL_S,
               message: str = "condition", wall: bool = False) -> T:
    """Call `predicate` until it returns something truthy; return that value. `wall`: the
    timeout is itself under test, in wall seconds, never stretched."""
    deadline = Deadline(timeout, wall=wall)
    last: T | None = None
    while True:
        last = predicate()
        if last:
            return last
        if deadline.expired():
            raise WaitTimeout(f"{message} not met within {deadline.describe()}; last value: {last!r}")
        time.sleep(interval)


async def async_wait_until(predicate: Callable[[], Awaitable[T]], *, timeout: float = 10.0,
                           interval: float = POLL_INTERVAL_S, message: str = "condition") -> T:
    deadline = Deadline(timeout)
    while True:
        last = await predicate()
        if last:
            return last
        if deadline.expired():
            raise WaitTimeout(f"{message} not met within {deadline.describe()}; last value: {last!r}")
        await asyncio.sleep(interval)


def wait_for_screen(read: Callable[[], str], shows: Callable[[str], object], *, timeout: float = 10.0,
                    message: str, screen_name: str, wall: bool = False) -> str:
    """Read a screen until `shows(screen)` holds; return it. A timeout's report ends with the
    last screen read, under `screen_name`."""
    seen = [""]

    def holds() -> bool:
        seen[0] = read()
        return bool(shows(seen[0]))

    try:
        wait_until(holds, timeout=timeout, message=message, wall=wall)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- {screen_name} ---\n{seen[0]}") from None
    return seen[0]


def returns_within(call: Callable[[], T], *, timeout: float, message: str = "the call") -> T:
    """`call()`'s result, run on a daemon thread, so that a call that blocks (an open() waiting on
    a FIFO) fails the test instead of hanging it; such a thread is left behind."""
    result: list[T] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True, name="returns-within")
    thread.start()
    deadline = Deadline(timeout)
    while thread.is_alive() and not deadline.expired():
        thread.join(deadline.next_wait_s())
    if not result:
        raise WaitTimeout(f"{message} still blocked after {deadline.describe()}")
    return result[0]
