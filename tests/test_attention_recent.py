"""The bus's recent events (list-events): the newest first kept past the ring's size, filtered
by kind, pane and time; a pane-scoped token lists its panes' events only; the record of a pane
says what its agent needs of a person."""

from __future__ import annotations

import asyncio

import pytest

from muxd.daemon.attention.recent import RecentEvents
from muxd.errors import MuxdError
from muxd.protocol.event_messages import DaemonEvent, EventList, ListEvents
from muxd.protocol.messages import ListPanes
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.wait import async_wait_until


def _event(kind: str, at: float, pane_id: str | None = "%1") -> DaemonEvent:
    return DaemonEvent(kind=kind, at=at, pane_id=pane_id)


def test_the_ring_keeps_the_newest_and_filters() -> None:
    recent = RecentEvents(keep=4)
    for n, (kind, pane) in enumerate([("agent-state", "%1"), ("agent-waiting", "%1"), ("agent-idle", "%2"),
                                      ("session-created", None), ("agent-waiting", "%2"), ("agent-idle", "%1")]):
        recent.take(_event(kind, float(n), pane))

    def listed(**filters: object) -> list[tuple[str, float]]:
        sees = filters.pop("sees", lambda pane_id: True)
        return [(e.kind, e.at) for e in recent.select(sees=sees, limit=filters.pop("limit", 10), **filters)]

    assert listed() == [("agent-idle", 2.0), ("session-created", 3.0), ("agent-waiting", 4.0), ("agent-idle", 5.0)]
    assert listed(limit=2) == [("agent-waiting", 4.0), ("agent-idle", 5.0)]  # the newest, oldest first
    assert listed(kinds={"agent-idle"}) == [("agent-idle", 2.0), ("agent-idle", 5.0)]
    assert listed(panes={"%2"}) == [("agent-idle", 2.0), ("agent-waiting", 4.0)]
    assert listed(after=3.0) == [("agent-waiting", 4.0), ("agent-idle", 5.0)]
    assert listed(sees=lambda pane_id: pane_id == "%1") == [("agent-idle", 5.0)]


def test_list_events_holds_what_the_caller_may_see(muxd_server) -> None:
    s = muxd_server
    one = start_fake_agent(s, "one")
    two = start_fake_agent(s, "two")
    token = s.cli("token", "create", "--tier", "execute_basic", "--pane", one, check=True).stdout.strip()

    async def look() -> tuple[EventList, EventList, EventList, list[object], MuxdError]:
        owner = await s.client()
        scoped = await s.client(token=token)
        try:
            for pane in (one, two):
                s.cli("send-keys", "-t", pane, "tool", "Enter", check=True)

            async def both_wait() -> bool:
                panes = (await owner.call(ListPanes, all=True)).panes
                return all(p.attention == "waiting" for p in panes)
            await async_wait_until(both_wait, timeout=20, message="both agents waiting")
            every = await owner.call(ListEvents, kinds=["agent-waiting"])
            mine = await scoped.call(ListEvents)
            newest = await owner.call(ListEvents, limit=1)
            records = (await owner.call(ListPanes, all=True)).panes
            with pytest.raises(MuxdError) as refused:
                await owner.call(ListEvents, kinds=["agent-sneezed"])
            with pytest.raises(MuxdError, match="limit must be between 1 and"):
                await owner.call(ListEvents, limit=0)
            return every, mine, newest, records, refused.value
        finally:
            await owner.close()
            await scoped.close()

    every, mine, newest, records, refused = asyncio.run(look())
    assert {e.pane_id for e in every.events} == {one, two} and {e.kind for e in every.events} == {"agent-waiting"}
    assert all("proceed" in (e.question or "").lower() for e in every.events)
    assert mine.events and {e.pane_id for e in mine.events} == {one}
    assert len(newest.events) == 1
    assert refused.code == "bad_request" and "agent-sneezed" in refused.message
    for pane in records:
        assert pane.attention == "waiting" and pane.attention_since and "proceed" in pane.attention_text.lower()
