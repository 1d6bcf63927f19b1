"""The guards of every MCP tool: token bucket, truncation, metrics (unit, injected clock), then
rate limit, timeout, size cap, metrics and list_tools through the real stdio client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from muxd.daemon.access.call_metrics import ToolMetrics, prometheus_text
from muxd.errors import BadRequest, NotFound
from muxd.mcp_server.errors import RateLimited
from muxd.mcp_server.guards import RateLimiter, TokenBucket, ToolGuard
from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.truncation import reply_bytes, truncate_to_fit
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session, result_text
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_allows_burst_then_refills_at_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate_per_s=10, burst=20, clock=clock)
    assert all(bucket.take() == 0.0 for _ in range(20))
    assert bucket.take() == pytest.approx(0.1)
    clock.now += 0.05
    assert bucket.take() == pytest.approx(0.05)
    clock.now += 0.05
    assert bucket.take() == 0.0
    clock.now += 100  # refills, but never beyond the burst
    assert sum(bucket.take() == 0.0 for _ in range(25)) == 20


def test_rate_limiter_keys_by_principal_and_tool() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rate_per_s=1, burst=1, clock=clock)
    limiter.check("system", "list_panes")
    limiter.check("system", "read_pane")
    limiter.check("agent:%1", "list_panes")
    with pytest.raises(RateLimited) as caught:
        limiter.check("system", "list_panes")
    assert caught.value.code == "rate_limited"
    assert caught.value.detail["retry_after_s"] == pytest.approx(1.0, abs=0.01)
    assert "retry after" in caught.value.message
    clock.now += 1.0
    limiter.check("system", "list_panes")


def test_truncate_to_fit_cuts_arrays_and_keeps_the_count() -> None:
    small = {"items": [1, 2, 3]}
    assert truncate_to_fit(small, 1024) is small
    big = {"items": [{"n": i, "text": "x" * 100} for i in range(1000)], "total": 1000}
    cut = truncate_to_fit(big, 10_000)
    assert reply_bytes(cut) <= 10_000
    assert cut["truncated"] is True and cut["original_count"] == 1000
    assert 0 < len(cut["items"]) < 1000 and cut["items"][0] == big["items"][0]
    assert cut["total"] == 1000 and len(big["items"]) == 1000  # the input is left alone


def test_truncate_to_fit_keeps_the_end_of_longresult_text() -> None:
    text = "\n".join(f"line {i}" for i in range(100_000))
    cut = truncate_to_fit({"text": text}, 4096)
    assert reply_bytes(cut) <= 4096 and cut["truncated"] is True
    assert cut["text"].endswith("line 99999") and cut["original_chars"] == {"text": len(text)}


def test_metrics_count_calls_errors_and_latency_buckets() -> None:
    metrics = ToolMetrics()
    metrics.record("read_pane", 3.0)
    metrics.record("read_pane", 70.0, "not_found")
    metrics.record("kill_pane", 50_000.0, "timeout")
    stats = metrics.snapshot()["read_pane"]
    assert stats["calls"] == 2 and stats["errors"] == 1 and stats["errors_by_code"] == {"not_found": 1}
    assert stats["latency_ms_buckets"]["5.0"] == 1 and stats["latency_ms_buckets"]["100.0"] == 2
    assert stats["latency_ms_buckets"]["+Inf"] == 2
    text = prometheus_text(metrics)
    assert 'mcp_calls_total{tool="read_pane"} 2' in text
    assert 'mcp_errors_total{tool="kill_pane",code="timeout"} 1' in text
    assert 'mcp_latency_seconds_bucket{tool="kill_pane",le="+Inf"} 1' in text
    assert 'mcp_latency_seconds_bucket{tool="kill_pane",le="30.0"} 0' in text


def test_guard_maps_errors_times_out_and_caps() -> None:
    async def scenario() -> None:
        guard = ToolGuard(GuardLimits(call_timeout_s=1.0, response_max_bytes=2048))
        with pytest.raises(ToolError, match="^not_found: no pane"):
            await guard.run("read_pane", _raises(NotFound("no pane")))
        never = asyncio.Event()
        with pytest.raises(ToolError, match="^timeout: "):
            await guard.run("wait_for", never.wait)
        capped = await guard.run("list_panes", _returns({"panes": list(range(5000))}))
        assert capped["truncated"] is True and capped["original_count"] == 5000
        stats = guard.metrics.snapshot()
        assert stats["read_pane"]["errors_by_code"] == {"not_found": 1}
        assert stats["wait_for"]["errors_by_code"] == {"timeout": 1}
        assert stats["list_panes"]["errors"] == 0

    asyncio.run(scenario())


def test_guard_limits_are_bounded() -> None:
    with pytest.raises(BadRequest, match="between 1.0 and 300.0"):
        GuardLimits(call_timeout_s=0.5)
    with pytest.raises(BadRequest):
        GuardLimits.from_env({"MUXD_MCP_TIMEOUT_S": "301"})
    limits = GuardLimits.from_env({"MUXD_MCP_RATE": "2", "MUXD_MCP_BURST": "3"})
    assert (limits.rate_per_s, limits.burst, limits.call_timeout_s) == (2.0, 3, 30.0)


def _raises(exc: Exception) -> Any:
    async def call() -> Any:
        raise exc
    return call


def _returns(value: Any) -> Any:
    async def call() -> Any:
        return value
    return call


# ------------------------------------------------------------------ through the stdio client

async def _size_cap(server: MuxdTestServer) -> None:
    async with mcp_session(server, MUXD_MCP_MAX_RESPONSE_BYTES="2048") as session:
        # The full tool list does not fit in 2 KiB: its array is cut, and says how long it was.
        listed = await call_ok(session, "list_tools")
        assert listed["truncated"] is True and listed["original_count"] == listed["total"] >= 11
        assert 0 < len(listed["tools"]) < listed["total"]
        assert len(result_text(await session.call_tool("list_tools", {}))) < 2048


async def _drive(server: MuxdTestServer) -> None:
    async with mcp_session(server, MUXD_MCP_RATE="0.5", MUXD_MCP_BURST="3", MUXD_MCP_TIMEOUT_S="1") as session:
        assert "truncated" not in await call_ok(session, "list_tools")

        risks = {t["name"]: t["risk"] for t in (await call_ok(session, "list_tools", risk="dangerous"))["tools"]}
        assert risks == {"kill_pane": "dangerous"}
        moderate = await call_ok(session, "list_tools", search="pane", risk="moderate")
        assert {t["name"] for t in moderate["tools"]} == {"create_pane", "dispatch_tasks", "resize_pane", "send_input", "send_task"}
        assert all(set(t) == {"name", "category", "risk", "description"} for t in moderate["tools"])

        # The rate limit: burst 3 per tool, then rate_limited with a retry-after; other tools unaffected.
        message = await call_error(session, "list_tools")
        assert "rate_limited: list_tools: " in message and "retry after" in message

        pane = await call_ok(session, "create_pane", command=["bash", "--norc"], env={"PS1": "$ "})
        # The timeout: a wait longer than the 1 s call limit is cancelled and answered `timeout`.
        message = await call_error(session, "wait_for", pane_id=pane["id"], state="AwaitingConfirmation",
                               timeout_s=5)
        assert "timeout: wait_for did not finish within 1 s" in message
        # Without a timeout of its own, a wait ends just before the call timeout, as an answer.
        quiet = await call_ok(session, "wait_for", pane_id=pane["id"], state="AwaitingConfirmation")
        assert quiet["reason"] == "timed_out" and 0.4 <= quiet["elapsed_s"] < 1
        assert "not_found" in await call_error(session, "read_pane", pane_id="%999")

        metrics = await call_ok(session, "get_tool_metrics")
        tools = metrics["tools"]
        assert tools["list_tools"]["calls"] == 4 and tools["list_tools"]["errors_by_code"] == {"rate_limited": 1}
        assert tools["wait_for"]["errors_by_code"] == {"timeout": 1}
        assert tools["read_pane"]["errors_by_code"] == {"not_found": 1}
        assert tools["create_pane"]["calls"] == 1 and tools["create_pane"]["errors"] == 0
        assert tools["wait_for"]["calls"] == 2 and tools["wait_for"]["latency_ms_buckets"]["+Inf"] == 2
        assert metrics["limits"]["call_timeout_s"] == 1.0
        prometheus = (await call_ok(session, "get_tool_metrics", format="prometheus"))["text"]
        assert 'mcp_errors_total{tool="list_tools",code="rate_limited"} 1' in prometheus

        # The daemon and the server keep serving after each guard fired.
        assert (await call_ok(session, "list_panes"))["panes"][0]["id"] == pane["id"]


def test_guards_through_stdio(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_drive(muxd_server), timeout=20))


def test_size_cap_through_stdio(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_size_cap(muxd_server), timeout=20))
