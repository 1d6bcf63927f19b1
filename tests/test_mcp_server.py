"""`muxd mcp` end to end: the real SDK client drives the server over stdio against a real daemon."""

from __future__ import annotations

import asyncio

from muxd.mcp_server.testing import call_error, call_ok, mcp_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

TOOL_NAMES = {"agent_summary", "list_agents", "list_panes", "create_pane", "send_input", "read_pane",
              "resize_pane", "kill_pane", "wait_for", "list_tools", "get_tool_metrics"}
SUMMARY_KEYS = {"pane_id", "agent_type", "is_agent", "activity", "session", "recent_tools", "context"}


async def _drive(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) >= TOOL_NAMES
        for name in ("agent_summary", "list_agents", "list_panes", "read_pane"):
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint
        assert tools["kill_pane"].annotations is not None and tools["kill_pane"].annotations.destructive_hint
        assert not tools["send_input"].annotations.read_only_hint  # type: ignore[union-attr]
        assert tools["agent_summary"].input_schema["required"] == ["pane_id"]
        assert tools["agent_summary"].input_schema["properties"]["output_lines"]["maximum"] == 50

        pane = await call_ok(session, "create_pane", command=["bash", "--norc"], name="sh1", tags=["worker"],
                           env={"PS1": "$ "}, columns=100, lines=30)
        pane_id = pane["id"]
        assert pane_id.startswith("%") and pane["name"] == "sh1" and pane["width"] == 100

        await call_ok(session, "send_input", pane_id=pane_id, text="echo hi-$((6*7))", submit=True)

        async def shows_answer() -> bool:
            read = await call_ok(session, "read_pane", pane_id="sh1", lines=10)
            return "hi-42" in read["text"].splitlines()

        await async_wait_until(shows_answer, timeout=10, interval=0.2, message="hi-42 in read_pane")  # < rate limit
        read = await call_ok(session, "read_pane", pane_id=pane_id, lines=1)
        assert read["lines"] == 1

        summary = await call_ok(session, "agent_summary", pane_id=pane_id)
        assert set(summary) == SUMMARY_KEYS
        assert summary["pane_id"] == pane_id and summary["is_agent"] is False
        assert set(summary["activity"]) == {"state", "description", "duration_secs"}
        assert set(summary["session"]) == {"id", "model", "tokens_used"}
        assert set(summary["context"]) == {"is_awaiting_input", "is_awaiting_confirmation", "tags", "cwd"}
        assert summary["context"]["tags"] == ["worker"]
        with_output = await call_ok(session, "agent_summary", pane_id="sh1", include_recent_output=True,
                                  output_lines=5)
        assert set(with_output) == SUMMARY_KEYS | {"recent_output"}
        assert len(with_output["recent_output"]) <= 5

        agents = (await call_ok(session, "list_agents"))["agents"]
        assert len(agents) == 1 and agents[0].startswith(f"{pane_id} sh1 ")
        panes = (await call_ok(session, "list_panes"))["panes"]
        assert [p["id"] for p in panes] == [pane_id] and "agent" not in panes[0]

        await call_ok(session, "resize_pane", pane_id=pane_id, columns=60, lines=20)
        panes = (await call_ok(session, "list_panes"))["panes"]
        assert (panes[0]["width"], panes[0]["height"]) == (60, 20)

        # Errors carry muxd's stable code; the server keeps serving after each.
        assert "not_found" in await call_error(session, "read_pane", pane_id="%999")
        assert "not_found" in await call_error(session, "agent_summary", pane_id="nosuch")
        message = await call_error(session, "agent_summary", pane_id=pane_id, output_lines=51)
        assert "bad_request" in message and "output_lines" in message
        assert "bad_request" in await call_error(session, "read_pane", pane_id=pane_id, lines=0)
        assert "bad_request" in await call_error(session, "resize_pane", pane_id=pane_id, columns=1, lines=20)
        assert "bad_request" in await call_error(session, "send_input", pane_id=pane_id, keys=["NoSuchKey"])
        assert "bad_request" in await call_error(session, "create_pane", cwd="relative/dir")

        assert (await call_ok(session, "kill_pane", pane_id=pane_id))["killed"] is True
        assert (await call_ok(session, "list_panes"))["panes"] == []
        assert "not_found" in await call_error(session, "kill_pane", pane_id=pane_id)


def test_mcp_server_over_stdio(muxd_server: MuxdTestServer) -> None:
    asyncio.run(asyncio.wait_for(_drive(muxd_server), timeout=30))
