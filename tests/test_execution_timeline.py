"""SqliteExecutionStore.timeline on SQLite and on PostgreSQL (`db_location`): the buckets of the
timeline's tallies (spans of a day, 6 hours, an hour, 15 minutes), of the hourly ones (a status)
and of the rows (a window on no span, an end, a scope) all equal a plain-Python reading of the
same rows; the tallied shapes read no execution row, a scope's only its covering indexes."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import msgspec
import pytest

from muxd.client.connection import Client
from muxd.errors import BadRequest
from muxd.executions.record import STATUSES, Execution
from muxd.protocol.execution_messages import ExecutionTimeline
from muxd.store import execution_timeline
from muxd.store.execution_store import ExecutionQuery, Scope, TimeBucket
from muxd.testing.mcp_http import create_token
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until
from test_store_executions import FAILED_ISH, HERE, _at, _matches, opened, run

HOUR = 3600
DAY = 86_400
BASE = 1_700_000_000 // HOUR * HOUR  # on a whole hour, so the tallies may answer
MIDNIGHT = BASE // DAY * DAY  # 21:20 before BASE: the rows run into the next day


def _day() -> list[Execution]:
    """3 agents in 3 panes over ~10 hours: every status, some commands, costs known and not."""
    rows = []
    for n in range(120):
        status = STATUSES[n % len(STATUSES)]
        at = BASE + n * 311 + 17
        rows.append(Execution(
            id=f"exec_{n:04d}", pane_id=f"%{n % 3}", pane_key=f"run/%{n % 3}", agent_name=f"agent-<{n % 3}>",
            kind="command" if n % 5 == 0 else "prompt", status=status, principal="token:ci" if n % 4 == 0 else None,
            queued_at=at - 1, started_at=None if status == "pending" else at,
            tokens_used=None if n % 6 == 0 else 10 * n, cost_usd=None if n % 4 == 1 else 0.01 * n, host=HERE))
    return rows


def _reference(rows: list[Execution], q: ExecutionQuery, bucket_s: int) -> list[TimeBucket]:
    assert q.since is not None
    groups: dict[tuple[int, str, str], list[Execution]] = defaultdict(list)
    for e in rows:
        if _matches(e, q):
            groups[int((_at(e) or 0.0) - q.since) // bucket_s, e.agent_name, e.kind].append(e)
    buckets = []
    for index, agent, kind in sorted(groups):
        mine = groups[index, agent, kind]
        costs = [e.cost_usd for e in mine if e.cost_usd is not None]
        buckets.append(TimeBucket(agent_name=agent, kind=kind, start=q.since + index * bucket_s,
                                  executions=len(mine), failures=sum(e.status in FAILED_ISH for e in mine),
                                  tokens=sum(e.tokens_used or 0 for e in mine),
                                  cost_usd=sum(costs) if costs else None))
    return buckets


def _same(got: list[TimeBucket], want: list[TimeBucket]) -> None:
    assert [msgspec.structs.replace(b, cost_usd=None) for b in got] == \
        [msgspec.structs.replace(b, cost_usd=None) for b in want]
    for g, w in zip(got, want):
        assert g.cost_usd == (None if w.cost_usd is None else pytest.approx(w.cost_usd))


TALLIED: list[tuple[ExecutionQuery, int]] = [
    (ExecutionQuery(since=BASE), HOUR), (ExecutionQuery(since=BASE + 2 * HOUR), 3 * HOUR),
    (ExecutionQuery(since=BASE, agent_name="agent-<1>"), 2 * HOUR),
    (ExecutionQuery(since=BASE, statuses=FAILED_ISH), HOUR), (ExecutionQuery(since=BASE, host=HERE), HOUR),
    (ExecutionQuery(since=BASE + 30 * HOUR), HOUR),  # after every row: none
    # the timeline's spans: whole days from a midnight, 6 hours, 15 minutes
    (ExecutionQuery(since=MIDNIGHT), DAY), (ExecutionQuery(since=MIDNIGHT - DAY), 2 * DAY),
    (ExecutionQuery(since=MIDNIGHT, agent_name="agent-<2>", statuses=FAILED_ISH), DAY),  # hours: a status
    (ExecutionQuery(since=MIDNIGHT, host=HERE), DAY), (ExecutionQuery(since=MIDNIGHT + 21 * HOUR), DAY),
    (ExecutionQuery(since=MIDNIGHT + 18 * HOUR), 6 * HOUR), (ExecutionQuery(since=BASE), 900),
    (ExecutionQuery(since=BASE + 2700, agent_name="agent-<0>"), 1800),
]
FROM_ROWS: list[tuple[ExecutionQuery, int]] = [
    (ExecutionQuery(since=BASE + 60), 900), (ExecutionQuery(since=BASE + 1234), HOUR),
    (ExecutionQuery(since=BASE, until=BASE + 5 * HOUR), HOUR),
    (ExecutionQuery(since=BASE, scope=Scope(pane_keys=frozenset({"run/%1"}))), HOUR),
    (ExecutionQuery(since=BASE, scope=Scope(pane_keys=frozenset({"run/%2"}), principal="token:ci")), 2 * HOUR),
    (ExecutionQuery(since=BASE, scope=Scope(pane_keys=frozenset({"run/%0", "run/%1"}), principal="token:ci"),
                    statuses=FAILED_ISH, until=BASE + 7 * HOUR), 900),
    (ExecutionQuery(since=BASE + 600, agent_name="agent-<0>", status="success"), 1800),
]


def test_a_timeline_counts_what_the_rows_say(db_location: str) -> None:
    rows = _day()
    postgres = db_location.startswith("postgresql")

    async def test() -> None:
        async with opened(db_location) as store:
            await store.save_many([(e, None) for e in rows])
            for q, bucket_s in TALLIED:
                assert execution_timeline.from_tallies(q, bucket_s, by_host=postgres) == (q.host is None or postgres)
                _same(await store.timeline(q, bucket_s), _reference(rows, q, bucket_s))
            for q, bucket_s in FROM_ROWS:
                assert not execution_timeline.from_tallies(q, bucket_s, by_host=postgres)
                _same(await store.timeline(q, bucket_s), _reference(rows, q, bucket_s))
            everything = await store.timeline(ExecutionQuery(since=BASE), HOUR)
            assert sum(b.executions for b in everything) == len(rows)
            assert {b.agent_name for b in everything} == {"agent-<0>", "agent-<1>", "agent-<2>"}
            assert await store.timeline(ExecutionQuery(since=BASE, scope=Scope(pane_keys=frozenset())), HOUR) == []
            # an execution written again (it ended) moves between statuses, not between buckets
            ended = msgspec.structs.replace(rows[1], status="failed")
            await store.save(ended)
            after = await store.timeline(ExecutionQuery(since=BASE), HOUR)
            assert sum(b.failures for b in after) == sum(b.failures for b in everything) + 1
            assert sum(b.executions for b in after) == len(rows)

    run(test)


def test_the_tallied_timeline_reads_no_execution_row(tmp_path: Path) -> None:
    async def create() -> None:
        async with opened(tmp_path / "h.db"):
            pass

    run(create)
    db = sqlite3.connect(tmp_path / "h.db")
    sql, params = execution_timeline.timeline(ExecutionQuery(since=BASE, statuses=FAILED_ISH), HOUR, by_host=False)
    plan: list[Any] = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    assert not any("executions " in f"{step} " and "execution_hours" not in step
                   and "SCAN executions" in step for step in plan), plan
    assert any("execution_hours" in step and "PRIMARY KEY" in step for step in plan), plan
    for since, bucket_s in ((MIDNIGHT, DAY), (MIDNIGHT, 6 * HOUR), (BASE, HOUR), (BASE, 900)):
        sql, params = execution_timeline.timeline(ExecutionQuery(since=since), bucket_s, by_host=False)
        plan = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
        assert plan[0] == "SEARCH execution_spans USING PRIMARY KEY (span=? AND bucket>?)" and \
            not any("executions " in f"{step} " for step in plan), plan
    sql, params = execution_timeline.timeline(ExecutionQuery(since=BASE + 1), HOUR, by_host=False)
    plan = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    assert any("executions_agent_kind_status (agent_name=? AND kind=? AND status=? AND at>?)" in step
               for step in plan) and "SCAN executions" not in plan, plan
    scoped = ExecutionQuery(since=BASE, scope=Scope(pane_keys=frozenset({"run/%1"}), principal="token:ci"))
    sql, params = execution_timeline.timeline(scoped, HOUR, by_host=False)
    plan = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    assert any("COVERING INDEX executions_pane_sums (pane_key=? AND at>?)" in step for step in plan), plan
    assert any("COVERING INDEX executions_principal_sums (principal=? AND at>?)" in step for step in plan), plan
    db.close()


def test_the_daemon_answers_a_timeline_in_the_callers_scope(muxd_server: MuxdTestServer) -> None:
    """`execution-timeline` through the daemon: system sees both panes' commands, a token bound to
    one pane only that pane's, view_only may read it; a bad bucket is a bad request."""
    s = muxd_server
    panes = {}
    for name in ("sh-<a>", "sh-b"):
        pane = s.cli("new-session", "-d", "-P", "-s", name.strip("<>"), "--name", name, check=True).stdout.strip()
        wait_until(lambda: s.cli("run", "-t", pane, "--wait", "--", "true").returncode == 0 or None,
                   timeout=15, interval=0.5, message=f"a command typed into {name}")
        panes[name] = pane
    s.cli("run", "-t", panes["sh-b"], "--wait", "--", "false")
    bound = create_token(s, "execute_advanced", "a-owner", "--pane", panes["sh-<a>"])
    watcher = create_token(s, "view_only", "watcher")
    since = time.time() // HOUR * HOUR - HOUR

    async def ask(token: str | None) -> dict[str, tuple[int, int]]:
        client = await Client.connect(s.socket_path, token=token)
        try:
            reply = await client.call(ExecutionTimeline, since=since, bucket_s=HOUR)
            assert reply.since == since and all(b.start in (since, since + HOUR) for b in reply.buckets)
            with pytest.raises(BadRequest):
                await client.call(ExecutionTimeline, since=since, bucket_s=1)
            with pytest.raises(BadRequest):
                await client.call(ExecutionTimeline, since=0, bucket_s=60)
        finally:
            await client.close()
        seen: dict[str, tuple[int, int]] = {}
        for b in reply.buckets:
            n, failed = seen.get(b.agent_name, (0, 0))
            seen[b.agent_name] = (n + b.executions, failed + b.failures)
        return seen

    everything = asyncio.run(ask(None))
    assert everything["sh-b"][0] >= 2 and everything["sh-b"][1] >= 1 and everything["sh-<a>"][0] >= 1
    assert asyncio.run(ask(watcher)) == everything
    assert asyncio.run(ask(bound)) == {"sh-<a>": everything["sh-<a>"]}
