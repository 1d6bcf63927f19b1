"""Rate limits: a token bucket, and one bucket per (principal, what it calls). Sans-IO: the clock
is injected. The MCP guards limit each tool call; the daemon limits each pane's hook events."""

from __future__ import annotations

import time
from collections.abc import Callable

from muxd.errors import RateLimited

Clock = Callable[[], float]
TOKEN_EPSILON = 1e-9


class TokenBucket:
    """`rate_per_s` tokens a second up to `burst`; a call takes one. Sans-IO: the clock is injected."""

    def __init__(self, rate_per_s: float, burst: int, clock: Clock = time.monotonic) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._updated = clock()

    def take(self) -> float:
        """0.0 when a token was taken; else the seconds until one will be available."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._updated) * self.rate_per_s)
        self._updated = now
        if self._tokens >= 1.0 - TOKEN_EPSILON:  # float sums of rate * elapsed fall a hair short
            self._tokens = max(0.0, self._tokens - 1.0)
            return 0.0
        return (1.0 - self._tokens) / self.rate_per_s


class RateLimiter:
    """One token bucket per (principal, tool)."""

    def __init__(self, rate_per_s: float, burst: int, clock: Clock = time.monotonic) -> None:
        self._rate_per_s = rate_per_s
        self._burst = burst
        self._clock = clock
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    def check(self, principal: str, tool: str) -> None:
        """Return when the call may go ahead; raise RateLimited with `retry_after_s` otherwise."""
        key = (principal, tool)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self._rate_per_s, self._burst, self._clock)
        wait_s = bucket.take()
        if wait_s > 0:
            retry = round(wait_s + 0.0005, 3)
            raise RateLimited(f"{tool}: more than {self._rate_per_s:g} calls/s (burst {self._burst}); "
                              f"retry after {retry} s", tool=tool, retry_after_s=retry)

    def forget(self, principal: str) -> None:
        """`principal` is gone (a pane that closed): its buckets go with it."""
        for key in [key for key in self._buckets if key[0] == principal]:
            del self._buckets[key]
