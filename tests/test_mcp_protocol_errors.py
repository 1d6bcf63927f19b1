"""Protocol errors of `muxd mcp` through the real SDK client: an unknown tool or prompt is a JSON-RPC
-32602 (not a tool result, no traceback), and initialize advertises only what muxd serves."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

from muxd.mcp_server.guards import UNKNOWN_TOOL_KEY
from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.mcp_stdio import call_ok, call_refused
from muxd.testing.server import MuxdTestServer

@asynccontextmanager
async def session_logging_to(server: MuxdTestServer, errlog: Path) -> AsyncIterator[ClientSession]:
    """A stdio session with `muxd mcp` whose stderr goes to the file `errlog`."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "muxd", "-L", server.name, "mcp"],
                                   env=server.env)
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def test_unknown_tool_and_prompt_are_invalid_params_without_traceback(
        muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    errlog = tmp_path / "mcp.err"
    asyncio.run(_unknown_over_stdio(muxd_server, errlog))
    logged = errlog.read_text()
    assert "Traceback" not in logged and "Unknown prompt" not in logged, logged


async def _unknown_over_stdio(muxd_server: MuxdTestServer, errlog: Path) -> None:
    async with session_logging_to(muxd_server, errlog) as session:
        refused = await call_refused(session, "drop_tables", really=True)
        assert refused.code == INVALID_PARAMS
        assert refused.message.startswith("not_found: no tool named 'drop_tables'")
        assert refused.data == {"name": "drop_tables"}
        for _ in range(3):  # each call once printed ~150 lines of traceback
            with pytest.raises(MCPError) as prompt:
                await session.get_prompt("code_review", {"file": "x.py"})
            assert prompt.value.code == INVALID_PARAMS
            assert prompt.value.message.startswith("not_found: no prompt named 'code_review'")
        # Still accounted for as muxd's calls are: audited under one name for every unknown one.
        history = await call_ok(session, "get_tool_history", limit=10)
        assert [(r["tool"], r["error_code"]) for r in history["calls"] if r["tool"] == UNKNOWN_TOOL_KEY] \
            == [(UNKNOWN_TOOL_KEY, "not_found")]
        # A bad argument of a real tool stays a tool result the model can correct.
        result = await session.call_tool("read_pane", {"pane_id": "%1", "lines": "many"})
        assert result.is_error and result.content[0].text.startswith("bad_request: lines")


def test_capabilities_are_what_muxd_serves(muxd_server: MuxdTestServer) -> None:
    asyncio.run(_capabilities(muxd_server))


async def _capabilities(muxd_server: MuxdTestServer) -> None:
    async with session_logging_to(muxd_server, muxd_server.socket_dir / "caps.err") as session:
        capabilities = session.initialize_result.capabilities
        assert capabilities.tools is not None
        assert capabilities.resources is not None and capabilities.resources.subscribe
        assert capabilities.prompts is None and capabilities.logging is None and capabilities.completions is None
        with pytest.raises(MCPError) as listed:
            await session.list_prompts()
        assert listed.value.code == METHOD_NOT_FOUND
        await session.list_resources()
        await session.list_tools()


def test_unknown_tool_over_http_is_invalid_params(muxd_server: MuxdTestServer) -> None:
    token = create_token(muxd_server, "admin")
    mcp = HttpMcp(muxd_server)
    try:
        asyncio.run(_unknown_over_http(mcp, token))
    finally:
        assert mcp.stop() == 0
    assert not any("Traceback" in line for line in mcp.log), "".join(mcp.log)


async def _unknown_over_http(mcp: HttpMcp, token: str) -> None:
    async with mcp.session(token) as session:
        refused = await call_refused(session, "no_such_tool")
        assert refused.code == INVALID_PARAMS and refused.message.startswith("not_found: no tool named")
        with pytest.raises(MCPError) as prompt:
            await session.get_prompt("nope")
        assert prompt.value.code == INVALID_PARAMS
