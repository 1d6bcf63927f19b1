"""The guards every MCP tool call passes: rate limit, timeout, response size cap, metrics.

`ToolGuard.wrap` is applied once, when a tool is registered (see `registry.py`), so no tool
body carries guard code. The principal is a parameter: "system" until tokens exist.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, ParamSpec

from mcp.server.mcpserver.exceptions import ToolError

from muxd.errors import MuxdError, Timeout
from muxd.mcp_server.errors import RateLimited, tool_error
from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.metrics import ToolMetrics
from muxd.mcp_server.truncation import truncate_to_fit

P = ParamSpec("P")
Clock = Callable[[], float]
SYSTEM_PRINCIPAL = "system"
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


def _error_code(exc: BaseException) -> str:
    if isinstance(exc, MuxdError):
        return exc.code
    if isinstance(exc, ToolError):  # the SDK's own (or an already mapped one): "code: message"
        head = str(exc).split(":", 1)[0]
        return head if head.isidentifier() else "bad_request"
    return "internal"


class ToolGuard:
    """Holds the limits, the rate limiter and the metrics shared by every tool of one server."""

    def __init__(self, limits: GuardLimits | None = None, *, metrics: ToolMetrics | None = None,
                 clock: Clock = time.monotonic) -> None:
        self.limits = limits or GuardLimits()
        self.metrics = metrics or ToolMetrics()
        self.rate_limiter = RateLimiter(self.limits.rate_per_s, self.limits.burst, clock)

    async def run(self, tool: str, call: Callable[[], Awaitable[Any]], *,
                  principal: str = SYSTEM_PRINCIPAL) -> Any:
        """Run one call of `tool` under every guard; MuxdErrors leave as ToolErrors with their code."""
        started = time.monotonic()
        error_code: str | None = None
        try:
            self.rate_limiter.check(principal, tool)
            try:
                result = await asyncio.wait_for(call(), self.limits.call_timeout_s)
            except TimeoutError as exc:
                raise Timeout(f"{tool} did not finish within {self.limits.call_timeout_s:g} s and was cancelled",
                              tool=tool, timeout_s=self.limits.call_timeout_s) from exc
            return truncate_to_fit(result, self.limits.response_max_bytes)
        except MuxdError as exc:
            error_code = exc.code
            raise tool_error(exc) from exc
        except BaseException as exc:
            error_code = _error_code(exc) if isinstance(exc, Exception) else "cancelled"
            raise
        finally:
            self.metrics.record(tool, (time.monotonic() - started) * 1000.0, error_code)

    def wrap(self, tool: str, fn: Callable[P, Awaitable[Any]], *,
             principal: Callable[[], str] = lambda: SYSTEM_PRINCIPAL) -> Callable[P, Awaitable[Any]]:
        """`fn` with the guards around it; its signature (hence its schema) is kept."""

        @wraps(fn)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> Any:
            return await self.run(tool, lambda: fn(*args, **kwargs), principal=principal())

        return guarded
