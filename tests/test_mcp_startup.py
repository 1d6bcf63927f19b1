"""`muxd mcp` answers `initialize` before the MCP SDK is imported, with the answer the SDK gives,
and the whole session then runs through the SDK (real SDK client over stdio)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types.version as mcp_versions
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from muxd import __version__
from muxd.mcp_server.identity import CAPABILITIES, HANDSHAKE_PROTOCOL_VERSIONS, INSTRUCTIONS, initialize_result
from muxd.mcp_server.server import build_registry
from muxd.mcp_server.stdio_front import early_answer
from muxd.testing.mcp_http import stdio_mcp_client
from muxd.testing.mcp_stdio import call_ok
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

SESSION_TIMEOUT_S = 60.0
# Python runs this at start (sitecustomize): an import of the SDK blocks on a FIFO the test opens.
_IMPORT_GATE = '''
import os, sys

class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name in ("mcp", "mcp_types"):
            sys.meta_path.remove(self)
            gate = os.environ["MUXD_TEST_IMPORT_GATE"]
            open(gate + ".waiting", "w").close()
            with open(gate) as fifo:
                fifo.read()
        return None

sys.meta_path.insert(0, _Gate())
'''


def _offer(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_static_answer_is_the_sdks() -> None:
    assert HANDSHAKE_PROTOCOL_VERSIONS == mcp_versions.HANDSHAKE_PROTOCOL_VERSIONS
    lowlevel = build_registry(None).server._lowlevel_server
    options = lowlevel.create_initialization_options()
    advertised = options.capabilities.model_dump(by_alias=True, exclude_none=True)
    assert {k: v for k, v in advertised.items() if v != {}} == CAPABILITIES  # an empty map is not sent
    assert (options.server_name, options.server_version, options.instructions) == ("muxd", __version__, INSTRUCTIONS)
    for offered, taken in [("2024-11-05", "2024-11-05"), ("2025-06-18", "2025-06-18"),
                           ("2026-07-28", mcp_versions.LATEST_HANDSHAKE_VERSION), ("1999-01-01", "2025-11-25")]:
        result = initialize_result(_offer(offered))
        assert result is not None and result["protocolVersion"] == taken
    # Not a well-formed offer: the SDK answers it (with its error), not the front.
    assert initialize_result({"protocolVersion": "2025-06-18"}) is None
    assert early_answer(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n') is None
    assert early_answer(b"not json\n") is None


def test_initialize_is_answered_before_the_sdk_is_imported(muxd_server: MuxdTestServer, tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(_IMPORT_GATE)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    env = {**muxd_server.env, "PYTHONPATH": str(tmp_path), "MUXD_TEST_IMPORT_GATE": str(gate)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "muxd", "-L", muxd_server.name, "mcp"], env=env)
    errlog = tmp_path / "mcp.err"
    with errlog.open("w") as err:
        asyncio.run(patient_wait_for(_gated_session(params, gate, err), SESSION_TIMEOUT_S))
    assert "warning" not in errlog.read_text(), errlog.read_text()  # the SDK's own answer was the same


async def _gated_session(params: StdioServerParameters, gate: Path, err: Any) -> None:
    async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
        result = await session.initialize()
        # Answered while the SDK's import is held at the gate (which the muxd process did reach).
        wait_until(lambda: Path(f"{gate}.waiting").exists(), timeout=SESSION_TIMEOUT_S, message="SDK import started")
        assert result.server_info.name == "muxd" and result.capabilities.tools is not None
        await anyio.to_thread.run_sync(_open_gate, gate)
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"agent_summary", "list_panes", "read_pane"} <= tools
        assert await call_ok(session, "list_panes") == {"panes": []}


def _open_gate(gate: Path) -> None:
    with gate.open("w"):
        pass


def test_session_without_initialize_first_goes_to_the_sdk(muxd_server: MuxdTestServer) -> None:
    # A client of the newest revision (2026-07-28) starts with server/discover, not initialize.
    asyncio.run(patient_wait_for(_modern_session(muxd_server), SESSION_TIMEOUT_S))


async def _modern_session(server: MuxdTestServer) -> None:
    async with stdio_mcp_client(server) as client:
        assert {"agent_summary", "list_panes"} <= {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("list_panes", {})
        assert not result.is_error and result.structured_content == {"panes": []}


def test_an_older_revision_is_answered_alike_by_front_and_sdk(muxd_server: MuxdTestServer) -> None:
    # Raw lines: the SDK client offers only its newest revision. The SDK's answer to the replayed
    # initialize is dropped; had it differed from the front's, a warning would say so on stderr.
    lines = [{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": _offer("2024-11-05")},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]
    out = muxd_server.cli("mcp", input="".join(json.dumps(line) + "\n" for line in lines))
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["id"] for r in replies] == [7, 8]  # one answer to initialize: the SDK's was dropped
    assert replies[0]["result"]["protocolVersion"] == "2024-11-05"
    assert any(t["name"] == "list_panes" for t in replies[1]["result"]["tools"])
    assert "warning" not in out.stderr, out.stderr
