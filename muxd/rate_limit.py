"""Rate limits: a token bucket, and one bucket per (principal, what it calls). Sans-IO: the clock
is injected. The MCP guards limit each tool call (per tool, and per category within a budget
that depends on the caller's tier: `TierBudgets`); the daemon limits each pane's hook events."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from muxd.errors import RateLimited

Clock = Callable[[], float]
TOKEN_EPSILON = 1e-9
TOOL_SCOPE, CATEGORY_SCOPE = "tool:", "category:"  # how a budget's scope is named: "tool:list_panes"


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
        wait_s = self.wait_s()
        if wait_s == 0.0:
            self._tokens = max(0.0, self._tokens - 1.0)
        return wait_s

    def wait_s(self) -> float:
        """0.0 when a token is there now (none taken); else the seconds until one will be."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._updated) * self.rate_per_s)
        self._updated = now
        if self._tokens >= 1.0 - TOKEN_EPSILON:  # float sums of rate * elapsed fall a hair short
            return 0.0
        return (1.0 - self._tokens) / self.rate_per_s

    def remaining(self) -> int:
        """Whole tokens left (as of the last take or wait_s)."""
        return int(math.floor(self._tokens + TOKEN_EPSILON))

    def full_in_s(self) -> float:
        """Seconds until the bucket is full again (as of the last take or wait_s)."""
        return max(0.0, (self.burst - self._tokens) / self.rate_per_s)


class RateLimiter:
    """One token bucket per (principal, tool)."""

    def __init__(self, rate_per_s: float, burst: int, clock: Clock = time.monotonic) -> None:
        self._rate_per_s = rate_per_s
        self._burst = burst
        self._clock = clock
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    def bucket(self, principal: str, tool: str) -> TokenBucket:
        key = (principal, tool)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self._rate_per_s, self._burst, self._clock)
        return bucket

    def check(self, principal: str, tool: str) -> None:
        """Return when the call may go ahead; raise RateLimited with `retry_after_s` otherwise."""
        wait_s = self.bucket(principal, tool).take()
        if wait_s > 0:
            retry = retry_after(wait_s)
            raise RateLimited(f"{tool}: more than {self._rate_per_s:g} calls/s (burst {self._burst}); "
                              f"retry after {retry} s", tool=tool, retry_after_s=retry)

    def forget(self, principal: str) -> None:
        """`principal` is gone (a pane that closed): its buckets go with it."""
        for key in [key for key in self._buckets if key[0] == principal]:
            del self._buckets[key]


def retry_after(wait_s: float) -> float:
    """`wait_s` rounded up to the millisecond: a client that waits this long finds a token."""
    return round(wait_s + 0.0005, 3)


@dataclass(frozen=True)
class Budget:
    """What a caller may still spend: `remaining` calls now of `limit`, whole again in `reset_s`;
    `scope` names the bucket ("tool:NAME" or "category:NAME"), the one that binds first."""

    remaining: int
    limit: int
    reset_s: float
    scope: str

    def as_meta(self, **extra: object) -> dict[str, object]:
        return {"remaining": self.remaining, "limit": self.limit, "reset_s": retry_after(self.reset_s),
                "scope": self.scope, **extra}


class TierBudgets:
    """One bucket per (principal, tool category), of `per_min` calls a minute for the caller's tier
    (capped per category by `category_per_min`): the budget of seed 004's subscription tiers."""

    WINDOW_S = 60.0

    def __init__(self, per_min: Mapping[str, int], category_per_min: Mapping[str, int],
                 clock: Clock = time.monotonic) -> None:
        self._per_min = dict(per_min)
        self._category_per_min = dict(category_per_min)
        self._clock = clock
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    def size(self, tier: str, category: str) -> int:
        """Calls a minute `tier` may make in `category` (a tier not configured gets the smallest budget)."""
        budget = self._per_min.get(tier, min(self._per_min.values()))
        return min(budget, self._category_per_min.get(category, budget))

    def bucket(self, principal: str, tier: str, category: str) -> TokenBucket:
        size = self.size(tier, category)
        bucket = self._buckets.get((principal, category))
        if bucket is None or bucket.burst != size:  # a new tier for this principal: a new budget
            bucket = self._buckets[(principal, category)] = TokenBucket(size / self.WINDOW_S, size, self._clock)
        return bucket


def take_all(buckets: Mapping[str, TokenBucket], what: str) -> Budget:
    """Take one token from each of `buckets` (by scope name) or from none: RateLimited, saying when to
    retry, when one is empty. The budget returned is the tightest one's after the take."""
    waits = {scope: bucket.wait_s() for scope, bucket in buckets.items()}
    scope, wait_s = max(waits.items(), key=lambda kv: kv[1])
    if wait_s > 0:
        bucket = buckets[scope]
        retry = retry_after(wait_s)
        per = (f"{bucket.rate_per_s * TierBudgets.WINDOW_S:g} calls/min" if scope.startswith(CATEGORY_SCOPE)
               else f"{bucket.rate_per_s:g} calls/s")
        raise RateLimited(f"{what}: the {scope} budget is spent ({per}, burst {bucket.burst}); retry after "
                          f"{retry} s", tool=what, retry_after_s=retry, scope=scope, limit=bucket.burst,
                          reset_s=retry_after(bucket.full_in_s()))
    for bucket in buckets.values():
        bucket.take()
    scope, bucket = min(buckets.items(), key=lambda kv: (kv[1].remaining(), -kv[1].full_in_s()))
    return Budget(bucket.remaining(), bucket.burst, bucket.full_in_s(), scope)
