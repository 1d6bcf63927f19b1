"""How long a test may wait for something to happen: a readiness ceiling is a budget of this
machine's time, not of wall time, so a wait that holds on an idle machine also holds on one busy
with other work (a loaded 2-core laptop, a shared CI runner), and a real hang still fails.

A `Deadline(budget_s)` spends its budget at the rate the machine gives a runnable process: each
wall second costs 1/stretch, where the stretch is the CPU load per core (re-read while waiting;
at least 1, at most LOAD_STRETCH_MAX) times MUXD_TEST_PATIENCE (a number, default 1) for machines
slower than their load shows. Ceilings an API takes as one number (a subprocess's timeout,
pytest-timeout's) are `stretched(budget_s)`: scaled by the stretch of the moment.

Only for "until X happens" ceilings: a timeout that is itself the behaviour under test (a command
that must give up after 0.5 s) stays a plain number.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

PATIENCE_ENV = "MUXD_TEST_PATIENCE"
LOAD_STRETCH_MAX = 10.0   # a hang still fails: a 10 s wait ends after 100 s at most (times the patience)
RECHECK_S = 0.25          # how long a blocking wait sleeps before it re-reads the load


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def load() -> float:
    """Runnable tasks competing for the CPUs: the 1-minute load average, or, when more are
    runnable right now (a load that has just started, which the average takes a minute to show),
    that count, less this process."""
    try:
        with open("/proc/loadavg") as fh:
            fields = fh.read().split()
        average, running = float(fields[0]), int(fields[3].split("/")[0]) - 1
    except (OSError, IndexError, ValueError):
        return os.getloadavg()[0]
    return max(average, float(running))


def patience() -> float:
    """MUXD_TEST_PATIENCE: the user's extra multiplier for a slow machine (1 when unset or bad)."""
    try:
        return max(1.0, float(os.environ.get(PATIENCE_ENV, "1")))
    except ValueError:
        return 1.0


def stretch(seen_load: float | None = None) -> float:
    """How many wall seconds one second of an idle machine's time takes now (or at `seen_load`)."""
    seen = load() if seen_load is None else seen_load
    return min(max(seen / cores(), 1.0), LOAD_STRETCH_MAX) * patience()


def stretched(budget_s: float) -> float:
    """`budget_s` in wall seconds at the machine's load now, for an API that takes one number."""
    return budget_s * stretch()


class Deadline:
    """A budget of machine time being spent: `expired()` re-reads the load each time it is asked
    (a wait polls it), `describe()` says what the wait saw, for its failure message."""

    def __init__(self, budget_s: float, *, wall: bool = False) -> None:
        """`wall`: a timeout under test, kept in wall seconds (it only reports what it saw)."""
        self.budget_s, self._wall = budget_s, wall
        self.started = self._last = time.monotonic()
        self._spent = 0.0
        self._stretch = 1.0 if wall else stretch()
        self._load_seconds = 0.0  # the load integrated over the wait, for its mean

    def _spend(self) -> None:
        now, seen = time.monotonic(), load()
        current = 1.0 if self._wall else stretch(seen)
        # The interval since the last look costs at the mean of its two ends' stretches.
        self._spent += (now - self._last) / ((current + self._stretch) / 2)
        self._load_seconds += (now - self._last) * seen
        self._last, self._stretch = now, current

    def expired(self) -> bool:
        self._spend()
        return self._spent >= self.budget_s

    def remaining_s(self) -> float:
        """Wall seconds left if the load stays as it is now (0 once expired)."""
        self._spend()
        return max(self.budget_s - self._spent, 0.0) * self._stretch

    def next_wait_s(self) -> float:
        """How long a blocking wait (a queue, a join) may sleep before it asks again."""
        return min(self.remaining_s(), RECHECK_S)

    def waited_s(self) -> float:
        return time.monotonic() - self.started

    def describe(self) -> str:
        """E.g. '10s of machine time (waited 43.2s wall, load 9.1 on 2 cores)'."""
        waited = self.waited_s()
        mean_load = self._load_seconds / waited if waited > 0 else load()
        extra = f", {PATIENCE_ENV}={patience():g}" if patience() != 1.0 else ""
        kind = "wall time" if self._wall else "machine time"
        return (f"{self.budget_s:g}s of {kind} (waited {waited:.1f}s wall, "
                f"load {mean_load:.1f} on {cores()} cores{extra})")


async def patient_wait_for(awaitable: Awaitable[T], timeout: float) -> T:
    """`asyncio.wait_for` whose `timeout` is a Deadline's budget: the awaitable's result, or it is
    cancelled and TimeoutError (asyncio's) names what the wait saw."""
    task = asyncio.ensure_future(awaitable)
    deadline = Deadline(timeout)
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=deadline.next_wait_s())
            if not task.done() and deadline.expired():
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
                raise TimeoutError(f"not done within {deadline.describe()}")
    except asyncio.CancelledError:
        task.cancel()
        raise
    return task.result()


def wait_process(process: subprocess.Popen[str] | subprocess.Popen[bytes], timeout: float) -> int:
    """`process.wait(timeout)` with `timeout` a Deadline's budget: its exit code, or
    subprocess.TimeoutExpired (the process is left running, as Popen.wait leaves it)."""
    deadline = Deadline(timeout)
    while True:
        try:
            return process.wait(deadline.next_wait_s())
        except subprocess.TimeoutExpired:
            if deadline.expired():
                raise subprocess.TimeoutExpired(process.args, deadline.waited_s()) from None


def event_set(event: threading.Event, timeout: float) -> bool:
    """`event.wait(timeout)` with `timeout` a Deadline's budget: whether the event was set."""
    deadline = Deadline(timeout)
    while not event.wait(deadline.next_wait_s()):
        if deadline.expired():
            return event.is_set()
    return True
