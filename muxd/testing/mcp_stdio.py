"""Test support: drive `muxd mcp` over stdio with the real SDK client against a test daemon,
and read the results of tool calls (over stdio or HTTP, mcp_http.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from muxd.mcp_server.limits import CALL_TIMEOUT_S_DEFAULT, WAIT_CALL_MARGIN_S
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer


@asynccontextmanager
async def mcp_session(server: MuxdTestServer, **env: str) -> AsyncIterator[ClientSession]:
    """An initialized client session with a `muxd mcp` of `server`, with extra environment `env`."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "muxd", "-L", server.name, "mcp"],
                                   env={**server.env, **env})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def wait_budget_s(budget_s: float) -> float:
    """A `wait_for` timeout_s for a readiness wait: `budget_s` stretched by the machine's load
    (patience.py), as far as a server with the default call timeout lets a wait run."""
    return max(budget_s, min(stretched(budget_s), CALL_TIMEOUT_S_DEFAULT - WAIT_CALL_MARGIN_S))


def result_text(result: Any) -> str:
    """The text blocks of a tool result, joined."""
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def call_ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a call that must succeed."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {result_text(result)}"
    structured: dict[str, Any] = result.structured_content
    return structured


async def call_error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The error text of a call that must fail."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    return result_text(result)


async def call_refused(session: ClientSession, tool: str, **arguments: Any) -> MCPError:
    """The JSON-RPC error of a call the server must refuse as a protocol error (an unknown tool)."""
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as exc:
        return exc
    raise AssertionError(f"{tool} should have been refused with a JSON-RPC error, got {result_text(result)!r}")
