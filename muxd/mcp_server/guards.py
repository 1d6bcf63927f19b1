"""The guards every MCP tool call passes: tier check, rate limit, timeout, size cap, audit.

`ToolGuard.wrap` is applied once, when a tool is registered (see `registry.py`), so no tool
body carries guard code. The caller is the daemon connection the call acts through
(`link.current_client()`): its Welcome names the principal (the rate-limit key) and the tier
(checked here to fail fast; the daemon checks every request again). Every call ends with one
`RecordCall` to the daemon, which writes the audit row and keeps the metrics of all MCP servers.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, ParamSpec

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from muxd.client.connection import Client
from muxd.config import AUDIT_SEND_TIMEOUT_S
from muxd.daemon.access.call_metrics import ToolMetrics
from muxd.daemon.access.tiers import UNKNOWN_RISK, check_tier
from muxd.errors import MuxdError, RateLimited, Timeout
from muxd.mcp_server.audit_records import audit_record, result_rows, send_audit_record
from muxd.mcp_server.errors import tool_error
from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.link import current_client
from muxd.mcp_server.truncation import truncate_to_fit
from muxd.protocol.messages import DeclaredTool, RegisterTools
from muxd.rate_limit import (  # noqa: F401 - TokenBucket: the guards' own, named here too
    CATEGORY_SCOPE, TOOL_SCOPE, Budget, RateLimiter, TierBudgets, TokenBucket, take_all,
)

P = ParamSpec("P")
Clock = Callable[[], float]
SYSTEM_PRINCIPAL = "system"
# The one name every call of a tool that does not exist is counted and audited under: the names
# callers invent would otherwise each get metrics of their own (not an identifier: no tool has it).
UNKNOWN_TOOL_KEY = "(unknown)"
log = logging.getLogger(__name__)


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
        self.budgets = TierBudgets(self.limits.tier_calls_per_min, self.limits.category_calls_per_min, clock)
        self.declared: list[DeclaredTool] = []  # every tool registered here, told to each daemon connection
        self._categories: dict[str, str] = {}  # tool -> its category (its budget's scope)
        self._announced: weakref.WeakSet[Client] = weakref.WeakSet()

    def register(self, tool: str, *, category: str, risk: str) -> None:
        """`tool` is registered: its metrics exist from now on (at zero), and the daemon will hear of it."""
        self.metrics.register(tool)
        self.declared.append(DeclaredTool(name=tool, category=category, risk=risk))
        self._categories[tool] = category

    def spend(self, principal: str, tier: str, tool: str) -> Budget:
        """One call of `tool` from the caller's budgets: the tool's own bucket (seed 003's rate) and
        its category's, sized by the tier (seed 004). The tightest is told to the caller in the
        result's _meta (RATE_LIMIT_META_KEY); an empty one is a RateLimited saying when to retry."""
        buckets = {f"{TOOL_SCOPE}{tool}": self.rate_limiter.bucket(principal, tool)}
        category = self._categories.get(tool)
        if category is not None:  # unknown tools (and bad arguments) spend only their own bucket
            buckets[f"{CATEGORY_SCOPE}{category}"] = self.budgets.bucket(principal, tier, category)
        try:
            budget = take_all(buckets, tool)
        except RateLimited as exc:
            _tell_budget({"remaining": 0, "limit": exc.detail["limit"], "reset_s": exc.detail["reset_s"],
                          "scope": exc.detail["scope"], "tier": tier, "retry_after_s": exc.detail["retry_after_s"]})
            raise
        _tell_budget(budget.as_meta(tier=tier))
        return budget

    async def announce(self, client: Client) -> None:
        """Tell the daemon behind `client` the tools registered here, once per connection, so its
        metrics list them before their first call; a daemon that cannot hear it costs a log line."""
        if client in self._announced or not self.declared:
            return
        self._announced.add(client)
        try:
            await asyncio.wait_for(client.call(RegisterTools, tools=self.declared), AUDIT_SEND_TIMEOUT_S)
        except (MuxdError, TimeoutError, OSError) as exc:
            log.warning("tools not registered with the daemon: %r", exc)

    async def run(self, tool: str, call: Callable[[], Awaitable[Any]], *, risk: str = UNKNOWN_RISK,
                  read_only: bool = False, args: dict[str, Any] | None = None) -> Any:
        """Run one call of `tool` under every guard; MuxdErrors leave as ToolErrors with their code."""
        principal, tier, client = _caller()
        if client is not None:  # once per connection, before the call and outside its latency
            await self.announce(client)
        started = time.monotonic()
        error_code: str | None = None
        result: Any = None
        try:
            check_tier(principal, tier, tool, risk, read_only)
            self.spend(principal, tier, tool)
            try:
                result = await asyncio.wait_for(call(), self.limits.call_timeout_s)
            except TimeoutError as exc:
                raise Timeout(f"{tool} did not finish within {self.limits.call_timeout_s:g} s and was cancelled",
                              tool=tool, timeout_s=self.limits.call_timeout_s) from exc
            result = truncate_to_fit(result, self.limits.response_max_bytes)
            return result
        except MuxdError as exc:
            error_code = exc.code
            raise tool_error(exc) from exc
        except BaseException as exc:
            error_code = _error_code(exc) if isinstance(exc, Exception) else "cancelled"
            raise
        finally:
            latency_ms = (time.monotonic() - started) * 1000.0
            self.metrics.record(tool, latency_ms, error_code)
            if client is not None:
                send_audit_record(client, audit_record(tool, args, error_code, result_rows(result), latency_ms))

    async def refused(self, tool: str, arguments: Any, error_code: str, latency_ms: float) -> RateLimited | None:
        """Count a call the SDK refused before `run` (arguments that did not validate; an unknown
        tool, which comes as UNKNOWN_TOOL_KEY): rate-limited, measured and audited like any call.
        Returns the RateLimited to answer instead of the refusal, when the caller is over its rate."""
        principal, tier, client = _caller()
        limited: RateLimited | None = None
        try:
            self.spend(principal, tier, tool)
        except RateLimited as exc:
            limited, error_code = exc, exc.code
        self.metrics.record(tool, latency_ms, error_code)
        if client is not None:
            send_audit_record(client, audit_record(tool, arguments, error_code, 0, latency_ms))
        return limited

    def wrap(self, tool: str, fn: Callable[P, Awaitable[Any]], *, risk: str = UNKNOWN_RISK,
             read_only: bool = False) -> Callable[P, Awaitable[Any]]:
        """`fn` with the guards around it; its signature (hence its schema) is kept."""

        @wraps(fn)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> Any:
            # The SDK's request Context (a tool that reports progress takes one) is no argument of the caller's.
            arguments = {k: v for k, v in kwargs.items() if not isinstance(v, Context)}
            return await self.run(tool, lambda: fn(*args, **kwargs), risk=risk, read_only=read_only,
                                  args=arguments)

        return guarded


# Where a tool result's _meta carries the caller's budget after the call (middleware.py puts it there).
RATE_LIMIT_META_KEY = "muxd/rate_limit"
_budget_told: ContextVar[dict[str, Any] | None] = ContextVar("muxd_budget_told", default=None)


@contextmanager
def budget_of_call() -> Iterator[dict[str, Any]]:
    """Around one tools/call: the dict the guard fills with the caller's budget (empty if none was spent)."""
    holder: dict[str, Any] = {}
    token = _budget_told.set(holder)
    try:
        yield holder
    finally:
        _budget_told.reset(token)


def _tell_budget(meta: dict[str, Any]) -> None:
    holder = _budget_told.get()
    if holder is not None:  # the tool body runs in a task of its own: the holder is shared, not the variable
        holder.clear()
        holder.update(meta)


def _caller() -> tuple[str, str, Client | None]:
    """(principal, tier, connection) of the current call; no connection (unit use): system."""
    try:
        client = current_client()
    except MuxdError:
        return SYSTEM_PRINCIPAL, "admin", None
    welcome = client.welcome
    if welcome is None:
        return SYSTEM_PRINCIPAL, "admin", client
    return welcome.principal, welcome.tier, client
