"""Seed 004's tool lifecycle on the daemon's bus: every tool an MCP server registers has its
metrics (at zero) before its first call and a `tool-registered` event; every call ends with a
`tool-called` event (tool, principal, status, error code, latency; never its arguments), heard
by who names the kind (`muxd watch --kind tool-called`), never by a reader of every kind. Real
daemon, `muxd mcp` over stdio through the real MCP SDK client, `muxd watch` as a user runs it."""

from __future__ import annotations

import asyncio
import json

from test_watch import Watch

from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

MARKER = "no-such-tool-marker-7f3a"  # an argument: it must never reach an event


async def until(check, message: str, timeout: float = 20.0):
    """`check()`'s first truthy value, waited for without blocking the loop."""
    async def probe():
        return check()
    return await async_wait_until(probe, timeout=timeout, message=message)


async def _calls(server: MuxdTestServer, tools_watch: Watch, all_watch: Watch) -> None:
    async with mcp_session(server) as session:
        # The very first call: every tool is listed already, none called (this one counts once it ended).
        first = await call_ok(session, "get_tool_metrics")
        listed = {t["name"]: t for t in (await call_ok(session, "list_tools"))["tools"]}
        assert set(first["tools"]) == set(listed) and len(listed) > 20
        assert all(first["tools"][name]["calls"] == 0 for name in listed)

        # The watch naming the tool kinds hears calls once subscribed: call until it heard one.
        async def heard_a_call() -> bool:
            await call_ok(session, "list_panes")
            return any(e["kind"] == "tool-called" for e in tools_watch.heard())

        await async_wait_until(heard_a_call, timeout=30, interval=0.5,  # within the rate limit
                               message="muxd watch --kind tool-called subscribed")

        assert MARKER not in json.dumps(await call_ok(session, "list_tools", search=MARKER))
        assert "not_found" in await call_error(session, "agent_summary", pane_id="%999")
        failed = await until(lambda: next((e for e in tools_watch.heard()
                                           if (e["kind"], e.get("tool")) == ("tool-called", "agent_summary")), None),
                             "the failed call's tool-called")
        history = (await session.call_tool("get_tool_history", {"tool": "agent_summary", "limit": 1})
                   ).structured_content["calls"][0]
        assert (failed["kind"], failed["status"], failed["error"]) == ("tool-called", "error", "not_found")
        assert failed["principal"] == history["principal"] and failed["latency_ms"] > 0
        searched = next(e for e in tools_watch.heard() if (e["kind"], e.get("tool")) == ("tool-called", "list_tools"))
        assert searched["status"] == "ok" and "error" not in searched

        # muxd://events (a reader of every kind) shows the registrations, not the calls.
        events = json.loads((await session.read_resource("muxd://events")).contents[0].text)["events"]
        registered = {e["tool"]: e for e in events if e["kind"] == "tool-registered"}
        assert set(registered) == set(listed)
        assert all((registered[n]["category"], registered[n]["risk"]) == (listed[n]["category"], listed[n]["risk"])
                   for n in listed)
        assert not any(e["kind"] == "tool-called" for e in events)

    # The reader of every kind is live (it hears a new session) and heard no call at all.
    server.cli("new-session", "-d", "-s", "after-the-calls", check=True)
    await until(lambda: any(e.get("session") == "after-the-calls" for e in all_watch.heard()),
                "the every-kind watch heard the new session")
    assert not any(e["kind"] == "tool-called" for e in all_watch.heard())
    every_line = "\n".join(tools_watch.lines + all_watch.lines)
    assert MARKER not in every_line


def test_registration_and_calls_are_events_and_metrics_list_every_tool(muxd_server: MuxdTestServer) -> None:
    tools_watch = Watch(muxd_server, "--kind", "tool-called", "--kind", "tool-registered")
    all_watch = Watch(muxd_server)
    try:
        asyncio.run(patient_wait_for(_calls(muxd_server, tools_watch, all_watch), timeout=120))
    finally:
        tools_watch.stop()
        all_watch.stop()
    assert {e["kind"] for e in tools_watch.heard()} <= {"tool-called", "tool-registered"}


def test_a_registration_that_is_not_one_is_refused_in_one_line(muxd_server: MuxdTestServer) -> None:
    from muxd.client.connection import Client
    from muxd.errors import BadRequest
    from muxd.protocol.messages import DeclaredTool, RegisterTools

    async def register(tools: list[DeclaredTool]) -> str:
        client = await Client.connect(muxd_server.socket_path)
        try:
            await client.call(RegisterTools, tools=tools)
            return "ok"
        except BadRequest as exc:
            return str(exc)
        finally:
            await client.close()

    bad_risk = asyncio.run(register([DeclaredTool(name="x_tool", category="engine", risk="harmless")]))
    assert "risk must be one of safe, moderate, dangerous" in bad_risk and "\n" not in bad_risk
    assert "control characters" in asyncio.run(register([DeclaredTool(name="a\x1bb", category="c", risk="safe")]))
    assert asyncio.run(register([DeclaredTool(name="x_tool", category="engine", risk="safe")])) == "ok"
    assert "x_tool" in muxd_server.cli("metrics", check=True).stdout  # listed before any call


def test_calls_keep_a_ring_of_their_own_and_never_push_the_agents_events_out() -> None:
    from muxd.daemon.attention.recent import RecentEvents
    from muxd.protocol.event_messages import DaemonEvent

    recent = RecentEvents(keep=3, keep_opt_in=2)
    for at in (1.0, 2.0, 3.0):
        recent.take(DaemonEvent(kind="agent-idle", at=at, pane_id="%1"))
    for at in range(4, 40):
        recent.take(DaemonEvent(kind="tool-called", at=float(at), tool="list_panes", status="ok"))
    recent.take(DaemonEvent(kind="tool-registered", at=40.0, tool="list_panes"))

    def kinds(**asked) -> list[tuple[str, float]]:
        return [(e.kind, e.at) for e in recent.select(sees=lambda pane: True, limit=10, **asked)]

    assert kinds() == [("agent-idle", 2.0), ("agent-idle", 3.0), ("tool-registered", 40.0)]
    assert kinds(kinds=["tool-called"]) == [("tool-called", 38.0), ("tool-called", 39.0)]
    assert kinds(kinds=["tool-called", "agent-idle"]) == [("agent-idle", 2.0), ("agent-idle", 3.0),
                                                          ("tool-called", 38.0), ("tool-called", 39.0)]
