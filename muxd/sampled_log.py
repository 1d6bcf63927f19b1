"""A log line for an event anyone can cause over and over (a refused token): the first is
logged at once, the rest are counted and summed up in one line per interval.

A flood of requests with made-up tokens would otherwise write one line each: at a thousand
a second, gigabytes of log a day. Used by the daemon (refused hellos) and `muxd mcp --http`
(refused bearer tokens).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable


class SampledLog:
    """`event()` logs `message` unless it was logged less than `interval_s` ago; the events held
    back are logged as one count when the interval ends (a timer on the running loop, else the
    next event), and by `flush()`."""

    def __init__(self, logger: logging.Logger, level: int, message: str, *, interval_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._logger = logger
        self._level = level
        self._message = message
        self._interval_s = interval_s
        self._clock = clock
        self._window_started: float | None = None  # when the line that opened this interval was logged
        self._held = 0
        self._timer: asyncio.TimerHandle | None = None

    def event(self, detail: str = "") -> None:
        """One more event; `detail` is logged with it when it is logged on its own line."""
        now = self._clock()
        if self._window_started is not None and now - self._window_started < self._interval_s:
            self._held += 1
            self._arm(self._window_started + self._interval_s - now)
            return
        self.flush()
        self._logger.log(self._level, "%s%s", self._message, detail)
        self._window_started = now

    def flush(self) -> None:
        """Log the count of the events held back, if any."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._held:
            return
        since_s = self._clock() - (self._window_started or 0.0)
        self._logger.log(self._level, "%s: %d more in the last %.0f s", self._message, self._held, since_s)
        self._held = 0

    def _arm(self, delay_s: float) -> None:
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: the next event or flush() logs the count
            return
        self._timer = loop.call_later(max(0.0, delay_s), self._interval_ended)

    def _interval_ended(self) -> None:
        self._timer = None
        if self._held:
            self.flush()
            # The flood goes on, as far as we know: the count just logged opens the next interval.
            self._window_started = self._clock()


class FailureStreak:
    """A log line for a job that fails each time it runs while something it needs is gone (the
    database, issue 30): the first failure of a streak is logged, the rest are counted, and the
    first success after them says how many there were."""

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self._logger = logger
        self._what = what   # "writing this host's heartbeat": what fails
        self._failures = 0

    def failed(self, message: str) -> None:
        """One more failure (`message`: its one line)."""
        self._failures += 1
        if self._failures == 1:
            self._logger.error("%s: %s (tried again quietly until it works)", self._what, message)

    def succeeded(self) -> None:
        if self._failures:
            self._logger.info("%s works again after %d failure(s)", self._what, self._failures)
            self._failures = 0
