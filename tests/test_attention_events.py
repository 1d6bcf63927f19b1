"""The daemon's event bus on a subscribed connection: a fake agent asking for a yes is
`agent-waiting` with its question, its turn's end `agent-idle` and `execution-finished`; kinds and
panes filter; a pane's own token hears its pane only; an unknown kind is refused."""

from __future__ import annotations

import asyncio

import pytest

from muxd.errors import MuxdError
from muxd.protocol.event_messages import DaemonEvent
from muxd.protocol.messages import Subscribe
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.wait import async_wait_until


def run(coro):
    return asyncio.run(coro)


def heard(check):
    """`check` as the awaitable predicate async_wait_until takes."""
    async def predicate():
        return check()
    return predicate


def kinds(events, pane_id=None):
    return [e.kind for e in events if isinstance(e, DaemonEvent) and (pane_id is None or e.pane_id == pane_id)]


def test_a_confirmation_and_the_turn_end_arrive_as_events(muxd_server):
    s = muxd_server
    pane = start_fake_agent(s, "asker")
    events: list[object] = []

    async def watch():
        client = await s.client(on_event=events.append)
        try:
            await client.call(Subscribe, events=True)
            s.cli("send-keys", "-t", pane, "tool", "Enter", check=True)
            await async_wait_until(heard(lambda: "agent-waiting" in kinds(events, pane)), timeout=20,
                                   message="agent-waiting")
            s.cli("send-keys", "-t", pane, "1", "Enter", check=True)
            await async_wait_until(heard(lambda: "agent-idle" in kinds(events, pane)), timeout=20, message="agent-idle")
        finally:
            await client.close()

    run(watch())
    waiting = next(e for e in events if isinstance(e, DaemonEvent) and e.kind == "agent-waiting")
    assert waiting.state == "AwaitingConfirmation" and waiting.agent_type == "claude"
    assert waiting.question and "proceed" in waiting.question.lower()
    assert (waiting.session, waiting.window_index, waiting.source) == ("asker", 0, "screen")
    assert waiting.at > 0
    # Only the bus's events: no AgentStateChanged on a connection that asked for events.
    assert all(isinstance(e, DaemonEvent) for e in events)
    changes = [(e.previous, e.state) for e in events if isinstance(e, DaemonEvent) and e.kind == "agent-state"]
    assert ("AwaitingConfirmation", "ToolUse") in changes or any(p == "AwaitingConfirmation" for p, _ in changes)


def test_kinds_and_panes_filter_and_a_pane_token_hears_its_own_pane_only(muxd_server):
    s = muxd_server
    one = start_fake_agent(s, "one")
    two = start_fake_agent(s, "two")
    token = s.cli("token", "create", "--tier", "execute_basic", "--pane", one, check=True).stdout.strip()
    everything: list[object] = []
    idle_only: list[object] = []
    scoped: list[object] = []

    async def watch():
        a = await s.client(on_event=everything.append)
        b = await s.client(on_event=idle_only.append)
        c = await s.client(on_event=scoped.append, token=token)
        try:
            await a.call(Subscribe, events=True)
            await b.call(Subscribe, events=True, kinds=["agent-idle"], panes=[two])
            await c.call(Subscribe, events=True)
            for pane in (one, two):
                s.cli("send-keys", "-t", pane, "hello", "Enter", check=True)
            await async_wait_until(heard(lambda: "agent-idle" in kinds(everything, one)
                                         and "agent-idle" in kinds(everything, two)),
                                   timeout=20, message="both turns ended")
            await async_wait_until(heard(lambda: "execution-finished" in kinds(everything, one)
                                         and "execution-finished" in kinds(everything, two)),
                                   timeout=20, message="both executions finished")
            await async_wait_until(heard(lambda: idle_only and "agent-idle" in kinds(scoped, one)), timeout=10,
                                   message="the filtered subscribers heard")
        finally:
            for client in (a, b, c):
                await client.close()

    run(watch())
    assert kinds(idle_only) == ["agent-idle"] and idle_only[0].pane_id == two
    assert {e.pane_id for e in scoped} == {one}  # the other pane's events never reach its token
    finished = next(e for e in everything if isinstance(e, DaemonEvent) and e.kind == "execution-finished")
    assert finished.status == "success" and finished.execution_id and finished.agent_type == "claude"


def test_an_unknown_event_kind_is_refused(muxd_server):
    s = muxd_server

    async def subscribe():
        client = await s.client()
        try:
            with pytest.raises(MuxdError) as refused:
                await client.call(Subscribe, events=True, kinds=["agent-waiting", "agent-sneezed"])
            return refused.value
        finally:
            await client.close()

    error = run(subscribe())
    assert error.code == "bad_request" and "agent-sneezed" in error.message and "agent-waiting," in error.message
