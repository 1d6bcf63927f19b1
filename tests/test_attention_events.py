"""The daemon's event bus on a subscribed connection: a fake agent asking for a yes is
`agent-waiting` with its question, its turn's end `agent-idle` and `execution-finished`; kinds and
panes filter; a pane's own token hears its pane only; an unknown kind is refused; a task moved is
heard by who names task-changed and may read the queue."""

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


def test_a_task_moved_is_heard_by_who_may_read_the_queue_and_named_it(muxd_server):
    # task-changed is opt-in (a reader of every kind does not hear it) and goes only to a token
    # with tasks:read, whatever panes it sees; a session made afterwards marks where it would have come.
    s = muxd_server
    reader = s.run_here("token", "create", "--tier", "execute_advanced", "--name", "queue-reader", check=True)
    writer_only = s.run_here("token", "create", "--tier", "execute_advanced", "--name", "queue-writer",
                             "--scope", "tasks:write", check=True)
    heard_by: dict[str, list[object]] = {"reader": [], "writer-only": [], "every-kind": []}

    async def watch():
        clients = {"reader": await s.client(token=reader.stdout.strip(), on_event=heard_by["reader"].append),
                   "writer-only": await s.client(token=writer_only.stdout.strip(),
                                                 on_event=heard_by["writer-only"].append),
                   "every-kind": await s.client(on_event=heard_by["every-kind"].append)}
        try:
            for name, client in clients.items():
                asked = None if name == "every-kind" else ["task-changed", "session-created"]
                await client.call(Subscribe, events=True, kinds=asked)
            task_id = s.run_here("task", "add", "heard or not", check=True).stdout.split()[0]
            await async_wait_until(heard(lambda: "task-changed" in kinds(heard_by["reader"])), timeout=20,
                                   message="the reader's task-changed")
            event = next(e for e in heard_by["reader"] if isinstance(e, DaemonEvent) and e.kind == "task-changed")
            assert (event.task_id, event.state) == (task_id, "ready")
            s.cli("new-session", "-d", "-s", "marker", check=True)
            for name in ("writer-only", "every-kind"):
                await async_wait_until(heard(lambda: "session-created" in kinds(heard_by[name])), timeout=20,
                                       message=f"{name}'s session-created")
                assert "task-changed" not in kinds(heard_by[name]), name
        finally:
            for client in clients.values():
                await client.close()

    run(watch())
