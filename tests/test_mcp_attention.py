"""Orchestrators wait on many panes at once through the real MCP SDK clients: wait_for's attention
form returns the fake agent that asks for a yes, with its question and summary; with no pane_id it
watches every pane the caller may see; a pane already waiting answers at once; progress
notifications tell how the wait goes; the event resources can be read and subscribed to (the
2026-07-28 listen stream and the earlier resources/subscribe), and a pane-scoped token's stream
and waits hold its own pane only."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourceUpdated

from muxd.testing.fake_agent_panes import agent_state, start_fake_agent
from muxd.testing.mcp_http import HttpMcp, create_token, stdio_mcp_client
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

WAIT_S = 20.0  # a wait's own timeout: far past what an agent takes to ask


class Progress:
    """The progress notifications of one call, as the SDK client's callback receives them."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))

    def said(self, text: str) -> bool:
        return any(text in (message or "") for _, _, message in self.seen)

    async def until(self, text: str, timeout: float = WAIT_S) -> None:
        async def told() -> bool:
            return self.said(text)
        await async_wait_until(told, timeout=timeout, message=f"a progress notification saying {text!r}")


def _ask(server: MuxdTestServer, pane: str) -> None:
    """Have the fake agent in `pane` ask for a yes (a tool's permission dialog)."""
    server.cli("send-keys", "-t", pane, "tool", "Enter", check=True)


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    structured: dict[str, Any] = result.structured_content
    return structured


def _state_is(server: MuxdTestServer, pane: str, state: str) -> Any:
    """The predicate async_wait_until takes: `pane`'s agent is in `state`."""
    async def holds() -> bool:
        return agent_state(server, pane) == state
    return holds


# ------------------------------------------------------------------ wait_for attention (stdio)

async def _wait_on_three(server: MuxdTestServer, panes: list[str]) -> None:
    asker = panes[1]
    async with mcp_session(server) as session:
        progress = Progress()
        wait = asyncio.ensure_future(session.call_tool(
            "wait_for", {"pane_id": panes, "attention": ["waiting"], "mode": "any", "timeout_s": WAIT_S},
            progress_callback=progress))
        await progress.until("waiting on any of 3 panes for waiting")  # the wait has begun
        # A turn that needs nobody: the wait goes on, and says what the pane does.
        server.cli("send-keys", "-t", panes[0], "hello", "Enter", check=True)
        await progress.until(f"{panes[0]} Thinking")
        _ask(server, asker)
        result = _structured(await wait)
        assert result["matched"] and result["reason"] == "attention", result
        [found] = result["panes"]
        assert found["pane_id"] == asker and found["attention"] == "waiting"
        assert "proceed" in found["question"].lower() and found["error"] is None
        assert found["state"] == "AwaitingConfirmation" == found["summary"]["activity"]["state"]
        assert found["summary"]["confirmation"]["tool"] == "Bash"
        assert result["since"] == found["since"] > 0

        # Progress: elapsed of the wait's timeout, rising.
        values = [p for p, _, _ in progress.seen]
        assert values == sorted(values) and len(set(values)) == len(values)
        assert {total for _, total, _ in progress.seen} == {WAIT_S}

        # The board holds the need: without a pane_id (any pane), it answers at once, the same need.
        again = await call_ok(session, "wait_for", attention="waiting", timeout_s=WAIT_S)
        assert again["matched"] and [p["pane_id"] for p in again["panes"]] == [asker]
        assert again["since"] == result["since"]
        # ... unless the caller says it handled that one already.
        skipped = await call_ok(session, "wait_for", attention=["waiting", "failed"], after=result["since"],
                                timeout_s=0.3)
        assert not skipped["matched"] and skipped["reason"] == "timed_out" and skipped["panes"] == []
        listed = {p["id"]: p for p in (await call_ok(session, "list_panes"))["panes"]}
        assert listed[asker]["attention"] == "waiting" and listed[asker]["attention_since"] == result["since"]
        assert "proceed" in listed[asker]["attention_text"].lower()
        await async_wait_until(_state_is(server, panes[0], "Idle"), timeout=WAIT_S, message="the turn's end")
        listed = {p["id"]: p for p in (await call_ok(session, "list_panes"))["panes"]}
        assert listed[panes[0]]["attention"] == "finished" and listed[panes[2]]["attention"] is None

        # mode=all: each named pane must come to need you.
        both = asyncio.ensure_future(call_ok(session, "wait_for", pane_id=[asker, panes[2]],
                                             attention="waiting", timeout_s=WAIT_S))
        _ask(server, panes[2])
        every = await both
        assert every["matched"] and {p["pane_id"] for p in every["panes"]} == {asker, panes[2]}

        for bad, says in (({"attention": ["sneezing"]}, "unknown kind(s) 'sneezing'; known: waiting, limited"),
                          ({"attention": []}, "attention is empty"),
                          ({"attention": "waiting", "state": "Idle"}, "attention takes no state"),
                          ({"attention": "waiting", "execution_id": "x"}, "takes no pane_id"),
                          ({"pane_id": asker, "state": "Idle", "after": 1.0}, "after goes with attention")):
            message = await call_error(session, "wait_for", **bad)
            assert message.startswith("bad_request: ") and says in message and "\n" not in message, message
        assert "not_found" in await call_error(session, "wait_for", pane_id=["%99"], attention="waiting")
        # The server still serves.
        assert (await call_ok(session, "list_panes"))["panes"]


def test_wait_for_attention_returns_the_pane_that_asks(muxd_server: MuxdTestServer) -> None:
    panes = [start_fake_agent(muxd_server, f"w{i}") for i in range(3)]
    asyncio.run(patient_wait_for(_wait_on_three(muxd_server, panes), timeout=90))


# ------------------------------------------------------------------ the event stream (stdio)

async def _listen_and_read(server: MuxdTestServer, pane: str, other: str) -> None:
    number = pane.removeprefix("%")
    uri = f"muxd://panes/{number}/attention"
    async with stdio_mcp_client(server) as client:
        templates = await client.list_resource_templates()
        assert "muxd://panes/{pane}/attention" in [t.uri_template for t in templates.resource_templates]
        before = json.loads((await client.read_resource(uri)).contents[0].text)
        assert before["pane_id"] == pane and before["attention"] is None and before["state"] == "Idle"
        updates: list[str] = []
        async with client.listen(resource_subscriptions=[uri, "muxd://elsewhere"]) as stream:
            assert stream.honored.resource_subscriptions == [uri]  # no such resource: not acknowledged
            _ask(server, pane)
            async for event in stream:
                assert isinstance(event, ResourceUpdated)
                updates.append(event.uri)
                now = json.loads((await client.read_resource(uri)).contents[0].text)
                if now["attention"] == "waiting":
                    break
        assert set(updates) == {uri}  # the other pane's events are not this subscription's
        assert "proceed" in now["text"].lower() and now["state"] == "AwaitingConfirmation" and now["since"]
        waiting = [e for e in now["events"] if e["kind"] == "agent-waiting"]
        assert waiting and waiting[-1]["pane_id"] == pane and "proceed" in waiting[-1]["question"].lower()
        everything = json.loads((await client.read_resource("muxd://events")).contents[0].text)["events"]
        assert {"agent-state", "agent-waiting"} <= {e["kind"] for e in everything}
        assert {pane, other} <= {e.get("pane_id") for e in everything}
        with pytest.raises(MCPError) as missing:
            await client.read_resource("muxd://panes/999/attention")
        assert str(missing.value).startswith("not_found: ")


async def _subscribe_the_earlier_way(server: MuxdTestServer, pane: str) -> None:
    told: list[Any] = []

    async def on_message(message: Any) -> None:
        told.append(message)

    params = StdioServerParameters(command=sys.executable, args=["-m", "muxd", "-L", server.name, "mcp"],
                                   env=server.env)
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, message_handler=on_message) as session:
        init = await session.initialize()
        assert init.capabilities.resources is not None and init.capabilities.resources.subscribe
        with pytest.warns(MCPDeprecationWarning):
            await session.subscribe_resource("muxd://events")
        with pytest.raises(MCPError) as unknown:
            with pytest.warns(MCPDeprecationWarning):
                await session.subscribe_resource("muxd://nothing")
        assert str(unknown.value).startswith("not_found: ")
        _ask(server, pane)

        async def updated() -> bool:
            return any(getattr(getattr(m, "params", None), "uri", None) == "muxd://events" for m in told)
        await async_wait_until(updated, timeout=WAIT_S, message="notifications/resources/updated")


def test_event_resources_and_subscriptions(muxd_server: MuxdTestServer) -> None:
    pane = start_fake_agent(muxd_server, "sub")
    other = start_fake_agent(muxd_server, "other")
    muxd_server.cli("send-keys", "-t", other, "hello", "Enter", check=True)  # events of another pane
    asyncio.run(patient_wait_for(_listen_and_read(muxd_server, pane, other), timeout=60))
    muxd_server.cli("send-keys", "-t", pane, "1", "Enter", check=True)  # yes: back to its prompt
    asyncio.run(async_wait_until(_state_is(muxd_server, pane, "Idle"), timeout=WAIT_S, message="the turn's end"))
    asyncio.run(patient_wait_for(_subscribe_the_earlier_way(muxd_server, pane), timeout=60))


# ------------------------------------------------------------------ HTTP: progress, a pane-scoped token

async def _over_http(server: MuxdTestServer, mcp: HttpMcp, admin: str, scoped: str, mine: str, theirs: str) -> None:
    async with mcp.session(admin) as boss, mcp.client(scoped) as worker:
        # A wait on a state tells progress too (the earlier revision's session, over HTTP).
        progress = Progress()
        busy = asyncio.ensure_future(boss.call_tool("wait_for", {"pane_id": mine, "state": "Thinking",
                                                                 "timeout_s": WAIT_S}, progress_callback=progress))
        await progress.until(f"waiting on {mine} for Thinking; {mine} Idle")
        server.cli("send-keys", "-t", mine, "hello", "Enter", check=True)
        assert _structured(await busy)["matched"]
        await async_wait_until(_state_is(server, mine, "Idle"), timeout=WAIT_S, message="the turn's end")

        stream_uris = ["muxd://events", f"muxd://panes/{mine[1:]}/attention", f"muxd://panes/{theirs[1:]}/attention"]
        async with worker.listen(resource_subscriptions=stream_uris) as stream:
            # The pane it may not see is left out of what the stream holds.
            assert sorted(stream.honored.resource_subscriptions or []) == sorted(stream_uris[:2])
            watched = Progress()
            wait = asyncio.ensure_future(worker.call_tool("wait_for", {"attention": "waiting", "timeout_s": WAIT_S},
                                                          progress_callback=watched))
            await watched.until("waiting on any pane for waiting")
            assert not watched.said(theirs)  # it is told of its own pane only
            _ask(server, theirs)
            await async_wait_until(_state_is(server, theirs, "AwaitingConfirmation"), timeout=WAIT_S,
                                   message="the other pane waiting")
            _ask(server, mine)
            result = _structured(await wait)
            assert [p["pane_id"] for p in result["panes"]] == [mine]
            async for event in stream:
                if event.uri == stream_uris[1]:
                    break
        events = json.loads((await worker.read_resource("muxd://events")).contents[0].text)["events"]
        assert events and {e.get("pane_id") for e in events} == {mine}
        with pytest.raises(MCPError) as refused:
            await worker.read_resource(stream_uris[2])
        assert str(refused.value).startswith("forbidden: ")
        assert not watched.said(theirs)


def test_over_http_progress_and_a_pane_scoped_stream(muxd_server: MuxdTestServer) -> None:
    mine = start_fake_agent(muxd_server, "mine")
    theirs = start_fake_agent(muxd_server, "theirs")
    admin = create_token(muxd_server, "admin", "boss")
    scoped = create_token(muxd_server, "execute_basic", "worker", "--pane", mine)
    mcp = HttpMcp(muxd_server)
    try:
        asyncio.run(patient_wait_for(_over_http(muxd_server, mcp, admin, scoped, mine, theirs), timeout=90))
    finally:
        assert mcp.stop() == 0, "".join(mcp.log)


# ------------------------------------------------------------------ reads pass the tools' guards

async def _guarded_reads(server: MuxdTestServer) -> None:
    limits = {"MUXD_MCP_RATE": "0.01", "MUXD_MCP_BURST": "2", "MUXD_MCP_MAX_RESPONSE_BYTES": "1024"}
    async with stdio_mcp_client(server, **limits) as client:
        first = json.loads((await client.read_resource("muxd://events")).contents[0].text)
        assert first["truncated"] is True and first["original_count"] > len(first["events"])
        await client.read_resource("muxd://events")
        with pytest.raises(MCPError) as limited:
            await client.read_resource("muxd://events")
        assert str(limited.value).startswith("rate_limited: ")


def test_resource_reads_are_rate_limited_and_cut_to_size(muxd_server: MuxdTestServer) -> None:
    pane = start_fake_agent(muxd_server, "chatty")
    muxd_server.cli("send-keys", "-t", pane, "hello", "Enter", check=True)
    asyncio.run(patient_wait_for(_wait_idle_after_turn(muxd_server, pane), timeout=30))
    asyncio.run(patient_wait_for(_guarded_reads(muxd_server), timeout=60))


async def _wait_idle_after_turn(server: MuxdTestServer, pane: str) -> None:
    async def finished() -> bool:
        listed = json.loads(server.cli("list-panes", "-a", "--json", check=True).stdout)
        return any(p["id"] == pane and p.get("attention") == "finished" for p in listed)
    await async_wait_until(finished, timeout=WAIT_S, message="the turn's end on the board")


# ------------------------------------------------------------------ a stream ends with its daemon

async def _daemon_goes(server: MuxdTestServer, mcp: HttpMcp, token: str) -> list[Any]:
    async with mcp.client(token) as client:
        async with client.listen(resource_subscriptions=["muxd://events"]) as stream:
            assert stream.honored.resource_subscriptions == ["muxd://events"]
            server.cli("kill-server", check=True)
            return [event async for event in stream]  # ends (gracefully: no SubscriptionLost) when it goes


def test_a_stream_ends_when_its_daemon_goes(muxd_server: MuxdTestServer) -> None:
    token = create_token(muxd_server, "admin", "boss")
    mcp = HttpMcp(muxd_server)
    try:
        assert asyncio.run(patient_wait_for(_daemon_goes(muxd_server, mcp, token), timeout=30)) == []
    finally:
        assert mcp.stop() == 0, "".join(mcp.log)
