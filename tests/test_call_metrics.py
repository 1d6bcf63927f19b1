"""Call metrics stay bounded whatever names callers send: the cap on tools and error codes (unit),
then a flood of invented tool names through `muxd mcp --http` and straight to the daemon, after
which `muxd metrics`, `get_tool_metrics` and `/metrics` still answer, small."""

from __future__ import annotations

import asyncio
import json

import httpx2

from muxd.config import METRICS_ERROR_CODES_MAX, METRICS_TOOLS_MAX
from muxd.daemon.access.call_metrics import OVERFLOW_KEY, ToolMetrics, prometheus_text
from muxd.mcp_server.guards import UNKNOWN_TOOL_KEY
from muxd.protocol.messages import RecordCall
from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.mcp_stdio import call_ok, call_refused, result_text
from muxd.testing.patience import patient_wait_for, stretched
from muxd.testing.server import MuxdTestServer

INVENTED_OVER_MCP = 300
INVENTED_OVER_THE_SOCKET = 5000
RECORD_BATCH = 500
# Long names are what made 3,700 of them overflow the 16 MiB frame: each is repeated on ~15 lines.
NAME_CHARS = 190
# What the replies may weigh with the cap in place (~256 tools); uncapped they reach megabytes.
REPLY_MAX_BYTES = 1024 * 1024


def test_tool_names_and_error_codes_are_capped() -> None:
    metrics = ToolMetrics()
    for n in range(METRICS_TOOLS_MAX + 50):
        metrics.record(f"tool_{n}", 1.0)
    metrics.record("tool_0", 1.0)  # a tool already counted keeps its own entry
    snapshot = metrics.snapshot()
    assert len(snapshot) == METRICS_TOOLS_MAX + 1
    assert snapshot[OVERFLOW_KEY]["calls"] == 50 and snapshot["tool_0"]["calls"] == 2
    for n in range(METRICS_ERROR_CODES_MAX + 7):
        metrics.record("tool_1", 1.0, f"code_{n}")
    errors = metrics.snapshot("tool_1")["tool_1"]["errors_by_code"]
    assert len(errors) == METRICS_ERROR_CODES_MAX + 1 and errors[OVERFLOW_KEY] == 7
    assert f'mcp_calls_total{{tool="{OVERFLOW_KEY}"}} 50' in prometheus_text(metrics)


async def _invent_over_mcp(mcp: HttpMcp, token: str) -> None:
    async with mcp.session(token) as session:
        # An unknown tool is a JSON-RPC error (-32602), not a tool result.
        answers = await asyncio.gather(*(call_refused(session, f"no_such_tool_{n}")
                                         for n in range(INVENTED_OVER_MCP)))
        texts = [a.message for a in answers]
        assert all(a.code == -32602 for a in answers)
        # Refused calls pass the rate limiter too: a burst, then rate_limited with a retry-after.
        assert sum(t.startswith("not_found: no tool named 'no_such_tool_") for t in texts) >= 20
        assert sum(t.startswith("rate_limited: ") and "retry after" in t for t in texts) >= 100, texts[-1]


async def _invent_over_the_socket(server: MuxdTestServer, token: str) -> None:
    # Any principal may report calls, under any names: view_only, straight to the daemon.
    client = await server.client(token=token)
    try:
        for start in range(0, INVENTED_OVER_THE_SOCKET, RECORD_BATCH):
            await asyncio.gather(*(client.call(RecordCall, tool=f"{n:06d}".ljust(NAME_CHARS, "x"),
                                               args_sha256="0" * 64, status="error", error_code=f"code_{n}")
                                   for n in range(start, start + RECORD_BATCH)))
    finally:
        await client.close()


async def _read_metrics(mcp: HttpMcp, token: str) -> tuple[dict, str]:
    async with mcp.session(token) as session:
        tools = (await call_ok(session, "get_tool_metrics"))["tools"]
        reply = await session.call_tool("get_tool_metrics", {})
        assert len(result_text(reply)) < REPLY_MAX_BYTES
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=stretched(30)) as http:
        response = await http.get(mcp.metrics_url)
    assert response.status_code == 200, response.text[:300]
    return tools, response.text


def test_invented_tool_names_cannot_break_the_metrics(muxd_server: MuxdTestServer) -> None:
    viewer = create_token(muxd_server, "view_only")
    mcp = HttpMcp(muxd_server)
    try:
        asyncio.run(patient_wait_for(_invent_over_mcp(mcp, viewer), timeout=60))
        tools, _ = asyncio.run(patient_wait_for(_read_metrics(mcp, viewer), timeout=30))
        # Every invented name over MCP is one entry; none has an entry of its own.
        assert tools[UNKNOWN_TOOL_KEY]["calls"] == INVENTED_OVER_MCP
        assert not any(name.startswith("no_such_tool_") for name in tools)

        asyncio.run(patient_wait_for(_invent_over_the_socket(muxd_server, viewer), timeout=60))
        tools, prometheus = asyncio.run(patient_wait_for(_read_metrics(mcp, viewer), timeout=30))
        assert len(tools) <= METRICS_TOOLS_MAX + 1 and tools[OVERFLOW_KEY]["calls"] > 0
        assert len(prometheus.encode()) < REPLY_MAX_BYTES
        out = muxd_server.cli("metrics", "--json")
        assert out.returncode == 0, out.stderr[-500:]
        assert len(out.stdout.encode()) < 2 * REPLY_MAX_BYTES
        assert len(json.loads(out.stdout)) <= METRICS_TOOLS_MAX + 1
    finally:
        assert mcp.stop() == 0
