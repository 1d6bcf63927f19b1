"""The audit trail and the call metrics: every MCP call (allowed, failed, denied, rate-limited)
becomes one audit row in the daemon's SQLite file (with the arguments' sha256, never the
arguments) and counts in the daemon's per-tool metrics, shared by every MCP server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from muxd.config import AUDIT_ERROR_CODE_MAX_CHARS
from muxd.errors import BadRequest, Forbidden
from muxd.mcp_server.guards import UNKNOWN_TOOL_KEY
from muxd.protocol import messages as m
from muxd.store.audit import args_sha256
from muxd.testing.mcp_stdio import call_error, call_ok, call_refused, mcp_session
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer

HEX64 = re.compile(r"^[0-9a-f]{64}$")
MARKER = "audit-marker-7f3a9c"  # an argument value that must never reach the database


def _db_bytes(server: MuxdTestServer) -> bytes:
    db = Path(server.env["MUXD_DB"])
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def _rows(history: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    return [r for r in history["calls"] if all(r[k] == v for k, v in match.items())]


async def _drive(server: MuxdTestServer, pane: str, viewer: str) -> None:
    async with mcp_session(server, MUXD_MCP_RATE="0.5", MUXD_MCP_BURST="2") as session:
        await call_ok(session, "send_input", pane_id=pane, text=f"echo {MARKER}", submit=True)
        await call_ok(session, "list_panes")
        await call_ok(session, "list_panes")
        assert "rate_limited" in await call_error(session, "list_panes")
        assert "not_found" in await call_error(session, "read_pane", pane_id="%999")
        # Refused by the SDK's argument validation, before muxd's guard: audited all the same.
        assert "bad_request: lines" in await call_error(session, "read_pane", pane_id=pane, lines="many")
        assert "not_found: no tool named 'drop_tables'" in (await call_refused(session, "drop_tables")).message

        history = await call_ok(session, "get_tool_history", limit=50)
        sent = _rows(history, tool="send_input")
        assert len(sent) == 1 and sent[0]["status"] == "ok" and sent[0]["principal"] == "system"
        assert HEX64.match(sent[0]["args_sha256"]) and sent[0]["kind"] == "mcp"
        assert sent[0]["latency_ms"] >= 0 and sent[0]["error_code"] is None
        listed = _rows(history, tool="list_panes")
        assert [r["status"] for r in listed] == ["rate_limited", "ok", "ok"]  # newest first
        assert listed[1]["args_sha256"] == listed[2]["args_sha256"]  # same arguments, same hash
        assert listed[1]["rows"] == 1  # one pane listed
        failed = _rows(history, tool="read_pane")
        assert [(r["status"], r["error_code"]) for r in failed] == [("error", "bad_request"), ("error", "not_found")]
        assert failed[1]["args_sha256"] != sent[0]["args_sha256"]
        assert failed[0]["args_sha256"] == args_sha256({"pane_id": pane, "lines": "many"})
        # Every name that is no tool is audited (and counted) under one: callers cannot invent entries.
        unknown = _rows(history, tool=UNKNOWN_TOOL_KEY)
        assert [(r["status"], r["error_code"]) for r in unknown] == [("error", "not_found")]
        assert not _rows(history, tool="drop_tables")
        only_errors = await call_ok(session, "get_tool_history", status="error")
        assert {r["tool"] for r in only_errors["calls"]} == {"read_pane", UNKNOWN_TOOL_KEY}
        assert "limit" in await call_error(session, "get_tool_history", limit=0)

    async with mcp_session(server, MUXD_TOKEN=viewer) as session:
        assert "forbidden" in await call_error(session, "send_input", pane_id=pane, text=MARKER)
        await call_ok(session, "list_panes")
        # The daemon's metrics cover both MCP servers' calls together.
        metrics = await call_ok(session, "get_tool_metrics")
        assert metrics["tools"]["list_panes"]["calls"] == 4
        assert metrics["tools"]["send_input"]["errors_by_code"] == {"forbidden": 1}
        text = (await call_ok(session, "get_tool_metrics", format="prometheus"))["text"]
        assert 'mcp_errors_total{tool="list_panes",code="rate_limited"} 1' in text

    # The viewer's denied call is audited as denied, under its own principal.
    client = await server.client()
    try:
        rows = (await client.call(m.GetToolHistory, principal="token:viewer", limit=10)).rows
        assert {(r.tool, r.status, r.error_code) for r in rows} >= {("send_input", "denied", "forbidden"),
                                                                   ("list_panes", "ok", None)}
        # A denied protocol request (no MCP in between) is audited by the daemon itself.
        viewer_client = await server.client(token=viewer)
        try:
            with pytest.raises(Forbidden):
                await viewer_client.call(m.SendKeys, target=pane, keys=[MARKER])
            with pytest.raises(BadRequest, match="args_sha256"):
                await viewer_client.call(m.RecordCall, tool="x", args_sha256="nope", status="ok")
            with pytest.raises(BadRequest, match="status"):
                await viewer_client.call(m.RecordCall, tool="x", args_sha256="0" * 64, status="fine")
            with pytest.raises(BadRequest, match="error_code"):
                await viewer_client.call(m.RecordCall, tool="x", args_sha256="0" * 64, status="error",
                                         error_code="e" * (AUDIT_ERROR_CODE_MAX_CHARS + 1))
            assert (await viewer_client.call(m.ListPanes)).panes  # still serving
        finally:
            await viewer_client.close()
        denied = (await client.call(m.GetToolHistory, status="denied", limit=10)).rows
        request_row = next(r for r in denied if r.kind == "request")
        assert (request_row.tool, request_row.principal) == ("send-keys", "token:viewer")
        assert request_row.args_sha256 == args_sha256({"type": "send-keys", "target": pane, "keys": [MARKER],
                                                       "literal": False, "hex": False})
        with pytest.raises(BadRequest, match="limit"):
            await client.call(m.GetToolHistory, limit=100_000)
    finally:
        await client.close()


def test_audit_rows_and_metrics(muxd_server: MuxdTestServer) -> None:
    pane = muxd_server.cli("new-session", "-d", "-P", "--", "bash", "--norc", check=True).stdout.strip()
    viewer = muxd_server.cli("token", "create", "--tier", "view_only", "--name", "viewer", check=True).stdout.strip()
    asyncio.run(patient_wait_for(_drive(muxd_server, pane, viewer), timeout=30))

    stored = _db_bytes(muxd_server)
    assert MARKER.encode() not in stored and b"echo " not in stored  # hashes only, never arguments
    assert hashlib.sha256(viewer.encode()).hexdigest().encode() in stored

    text = muxd_server.cli("metrics", check=True).stdout
    assert "# TYPE mcp_calls_total counter" in text
    assert 'mcp_calls_total{tool="list_panes"} 4' in text
    assert 'mcp_errors_total{tool="send_input",code="forbidden"} 1' in text
    assert 'mcp_latency_seconds_bucket{tool="send_input",le="+Inf"} 2' in text
    per_tool = json.loads(muxd_server.cli("metrics", "--json", check=True).stdout)
    assert per_tool["send_input"]["calls"] == 2 and per_tool["send_input"]["errors"] == 1
