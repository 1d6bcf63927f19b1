"""`muxd mcp` end to end: the real SDK client drives the server over stdio against a real daemon."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from muxd.testing.mcp_http import create_token, stdio_session
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session, result_text
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

TOOL_NAMES = {"agent_summary", "list_agents", "list_panes", "create_pane", "send_input", "read_pane",
              "resize_pane", "kill_pane", "wait_for", "list_tools", "get_tool_metrics"}
# Seed 002's own fields: always there. confirmation, error, limit, background, sources and confidence
# (absent: "screen") only when they have something to say.
SUMMARY_KEYS = {"pane_id", "agent_type", "is_agent", "activity", "session", "recent_tools", "context"}
QUIET_KEYS = {"confirmation", "error", "limit", "background", "sources", "confidence"}


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
        assert SUMMARY_KEYS <= set(summary) <= SUMMARY_KEYS | QUIET_KEYS
        assert summary["pane_id"] == pane_id and summary["is_agent"] is False
        assert set(summary["activity"]) == {"state", "description", "duration_secs"}  # no tool in use
        assert set(summary["session"]) == {"id", "model", "tokens_used"}
        assert set(summary["context"]) == {"is_awaiting_input", "is_awaiting_confirmation", "tags", "cwd"}
        assert summary["context"]["tags"] == ["worker"]
        assert "confidence" not in summary and "sources" not in summary  # all read off the screen
        with_output = await call_ok(session, "agent_summary", pane_id="sh1", include_recent_output=True,
                                  output_lines=5)
        assert "recent_output" in with_output and set(with_output) - {"recent_output"} == set(summary)
        assert len(with_output["recent_output"]) <= 5

        agents = (await call_ok(session, "list_agents"))["agents"]
        assert len(agents) == 1 and agents[0].startswith(f"{pane_id} sh1 ")
        panes = (await call_ok(session, "list_panes"))["panes"]
        assert [p["id"] for p in panes] == [pane_id] and "agent" not in panes[0]

        await call_ok(session, "resize_pane", pane_id=pane_id, columns=60, lines=20)
        panes = (await call_ok(session, "list_panes"))["panes"]
        assert (panes[0]["width"], panes[0]["height"]) == (60, 20)

        # Errors start with muxd's stable code (not the SDK's "Error executing tool …");
        # the server keeps serving after each.
        assert (await call_error(session, "read_pane", pane_id="%999")).startswith("not_found: ")
        assert (await call_error(session, "agent_summary", pane_id="nosuch")).startswith("not_found: ")
        message = await call_error(session, "agent_summary", pane_id=pane_id, output_lines=51)
        assert message.startswith("bad_request: ") and "output_lines" in message
        assert "bad_request" in await call_error(session, "read_pane", pane_id=pane_id, lines=0)
        assert "bad_request" in await call_error(session, "resize_pane", pane_id=pane_id, columns=1, lines=20)
        assert "bad_request" in await call_error(session, "send_input", pane_id=pane_id, keys=["NoSuchKey"])
        assert "bad_request" in await call_error(session, "create_pane", cwd="relative/dir")
        for bad in ({"name": "n" * 201}, {"tags": ["t" * 65]}, {"env": {"K": "v" * 40000}}):
            field = next(iter(bad))
            assert f"bad_request: {field}" in await call_error(session, "create_pane", **bad), bad

        assert (await call_ok(session, "kill_pane", pane_id=pane_id))["killed"] is True
        assert (await call_ok(session, "list_panes"))["panes"] == []
        assert "not_found" in await call_error(session, "kill_pane", pane_id=pane_id)


def test_mcp_server_over_stdio(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_drive(muxd_server), timeout=30))


FAKE_CLAUDE = [sys.executable, "-m", "muxd.testing.fake_agent", "claude"]


async def _summary_schema(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        schema = tools["agent_summary"].output_schema
        assert schema is not None and set(schema["required"]) == SUMMARY_KEYS
        assert QUIET_KEYS | {"recent_output"} <= set(schema["properties"])
        assert "recent_output" in schema["properties"]
        pane = await call_ok(session, "create_pane", command=FAKE_CLAUDE, name="agent", tags=["worker", "feat-1"],
                             columns=100, lines=30)

        async def claude_idle() -> dict[str, Any] | None:
            summary = await call_ok(session, "agent_summary", pane_id="agent")
            return summary if summary["agent_type"] == "claude" and summary["activity"]["state"] == "Idle" else None

        summary = await async_wait_until(claude_idle, timeout=15, interval=0.2, message="claude idle")
        assert set(summary) == SUMMARY_KEYS and summary["pane_id"] == pane["id"]
        assert summary["is_agent"] is True
        assert summary["context"] == {"is_awaiting_input": True, "is_awaiting_confirmation": False,
                                      "tags": ["worker", "feat-1"], "cwd": summary["context"]["cwd"]}
        assert isinstance(summary["activity"]["duration_secs"], int) and summary["recent_tools"] == []
        assert summary["session"]["tokens_used"] is None  # unknown: null, not 0 (seed 002)
        assert "confirmation" not in summary and "error" not in summary  # nothing asked, no error shown

        # The text a model reads is the same object as the structured result, without the indentation.
        result = await session.call_tool("agent_summary", {"pane_id": "agent"})
        assert json.loads(result_text(result)) == result.structured_content
        assert "\n" not in result_text(result)

        most = await call_ok(session, "agent_summary", pane_id="agent", include_recent_output=True, output_lines=50)
        assert 0 < len(most["recent_output"]) <= 50 and all("\x1b" not in line for line in most["recent_output"])
        for bad in ({"output_lines": 0}, {"output_lines": 51}, {"output_lines": "ten"}):
            message = await call_error(session, "agent_summary", pane_id="agent", **bad)
            assert "bad_request: output_lines" in message, message
        message = await call_error(session, "agent_summary", pane_id="x" * 201)
        assert "bad_request: pane_id" in message, message
        message = await call_error(session, "agent_summary")
        assert "bad_request: pane_id: Field required" in message, message

        await call_ok(session, "send_input", pane_id="agent", text="tool", submit=True)

        async def confirming() -> dict[str, Any] | None:
            summary = await call_ok(session, "agent_summary", pane_id="agent")
            return summary if summary["context"]["is_awaiting_confirmation"] else None

        asking = await async_wait_until(confirming, timeout=15, interval=0.2, message="confirmation")
        assert asking["activity"]["state"] == "AwaitingConfirmation"
        assert asking["context"]["is_awaiting_input"] is False
        assert asking["confirmation"] == {
            "prompt": "Do you want to proceed?", "tool": "Bash",
            "options": ["1. Yes", "2. Yes, and don't ask again for mkdir commands in /tmp/work", "3. No"]}


def test_agent_summary_matches_seed_002(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_summary_schema(muxd_server), timeout=35))


def test_mcp_limit_flags_are_bounded(muxd_server: MuxdTestServer) -> None:
    for flags, words in ((["--rate", "0"], "rate must be > 0"), (["--burst", "0"], "burst must be >= 1"),
                         (["--timeout", "0.5"], "between 1.0 and 300.0"), (["--timeout", "301"], "between 1.0"),
                         (["--max-response-bytes", "100"], ">= 1024")):
        out = muxd_server.cli("mcp", *flags, input="")
        assert out.returncode == 1 and words in out.stderr, (flags, out.stderr)
    out = muxd_server.cli("mcp", "--rate", "fast", input="")
    assert out.returncode == 2 and "--rate" in out.stderr


async def _flags(server: MuxdTestServer) -> None:
    async with stdio_session(server, "--rate", "1", "--burst", "2", "--timeout", "1",
                             "--max-response-bytes", "2048") as session:
        pane = await call_ok(session, "create_pane", command=["sh", "-c", "seq 1 400; exec sleep 100"])
        await call_ok(session, "list_panes")
        await call_ok(session, "list_panes")
        message = await call_error(session, "list_panes")  # a third at once: over the burst of 2
        assert "rate_limited" in message and "retry after" in message
        message = await call_error(session, "wait_for", pane_id=pane["id"], state="AwaitingConfirmation", timeout_s=5)
        assert "timeout" in message and "1 s" in message

        async def cut_to_the_last_lines() -> dict[str, Any] | None:  # read_pane is at 1 call/s too
            read = await session.call_tool("read_pane", {"pane_id": pane["id"], "lines": 400})
            done = not read.is_error and read.structured_content["text"].endswith("\n400")
            return read.structured_content if done else None

        read = await async_wait_until(cut_to_the_last_lines, timeout=10, interval=1.05, message="seq 400 read")
        assert read["truncated"] is True and read["original_chars"]["text"] > len(read["text"])
        assert len(json.dumps(read)) < 2048


def test_mcp_limit_flags_apply(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_flags(muxd_server), timeout=30))


async def _scoped(server: MuxdTestServer, token: str) -> None:
    server.cli("new-session", "-d", "--name", "work", "--", "bash", "--norc", check=True)
    async with stdio_session(server, MUXD_TOKEN=token) as session:  # as inside a pane: from the env
        assert [p["name"] for p in (await call_ok(session, "list_panes"))["panes"]] == ["work"]
        message = await call_error(session, "send_input", pane_id="work", text="true", submit=True)
        assert "forbidden" in message and "execute_advanced" in message, message
        assert (await call_ok(session, "agent_summary", pane_id="work"))["is_agent"] is False


def test_mcp_stdio_acts_as_its_token(muxd_server: MuxdTestServer) -> None:
    token = create_token(muxd_server, "view_only")
    asyncio.run(patient_wait_for(_scoped(muxd_server, token), timeout=30))
    out = muxd_server.cli("mcp", "--token", "muxd_nope", input="")
    assert out.returncode == 1 and "unknown or revoked token" in out.stderr, out.stderr
