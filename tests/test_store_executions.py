"""SqliteExecutionStore on real SQLite files and on a real PostgreSQL database (`db_location`: each
test on both, issue 30): every field kept, every filter, scope rules, traces, failure patterns,
stats, interrupted executions, pruning; on SQLite also the migration from schema 1 and the plans.

Each query is checked against a plain-Python reading of the same rows (`_reference_*`).
Failures of the database itself (kill -9, full disk, locks) are in test_store_executions_failures.py.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest

from muxd.executions.record import STATUSES, TRIGGERS, Execution, ExecutionError, Status
from muxd.executions.transcript import Transcript, TranscriptBuffer
from muxd.store.hosts import host_from_env
from muxd.store.opening import open_database
from muxd.store.execution_store import EVERYTHING, AgentStats, ErrorPattern, ExecutionQuery, Scope
from muxd.store.schema import MIGRATIONS
from muxd.store.sqlite_executions import INTERRUPTED_MESSAGE, SqliteExecutionStore, stack_hash

T = TypeVar("T")
BASE = 1_700_000_000.0
FAILED_ISH = ("failed", "timeout", "interrupted")


# The host the stores opened here record (store/hosts.py): a record read back says it.
HERE = host_from_env(os.environ)
ONE_PANE: dict[str, Any] = {"pane_id": "%1", "pane_key": "r/%1", "agent_name": "a", "host": HERE}


def run(test: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(test())


@asynccontextmanager
async def opened(path: Path | str, **store_options: Any) -> AsyncIterator[SqliteExecutionStore]:
    """The store of the database at `path` (a SQLite file, ":memory:" or a PostgreSQL URL)."""
    db = open_database(str(path))
    store = SqliteExecutionStore(db, **store_options)
    try:
        yield store
    finally:
        store.close()
        db.close()


def _at(e: Execution) -> float | None:
    return e.started_at if e.started_at is not None else e.queued_at


def _fleet(count: int = 80) -> list[Execution]:
    """Executions of 3 agents in 4 panes, every status and trigger, one every 10 s, oldest first."""
    rng = random.Random(7)
    rows = []
    for n in range(count):
        status = STATUSES[n % len(STATUSES)] if n % 3 else rng.choice(STATUSES)
        error = None
        if status in FAILED_ISH or (status == "cancelled" and n % 2):
            kind, message = rng.choice([("api_error", "overloaded"), ("exit_status", "exit 1"), ("timeout", "slow")])
            error = ExecutionError(type=kind, message=message, stack_hash=stack_hash(kind, message))
        trace = f"trace-{n // 3}" if n % 5 < 3 else None
        rows.append(Execution(
            id=f"exec_{n:04d}", pane_id=f"%{n % 4}", pane_key=f"run/%{n % 4}", agent_name=f"agent-{n % 3}",
            kind="command" if n % 7 == 0 else "prompt", agent_type=("claude", "codex", None)[n % 5 % 3],
            status=status, triggered_by=TRIGGERS[n % len(TRIGGERS)],
            principal=rng.choice([None, "token:ci", "agent:%1"]), task_id=rng.choice([None, "task-a", "task-b"]),
            trace_id=trace, attempt=(n % 3) + 1 if trace else None, error=error,
            queued_at=BASE + n * 10 - 1, started_at=None if status == "pending" else BASE + n * 10,
            duration_ms=None if status in ("pending", "running") else 1000 + n,
            tokens_used=100 + n, cost_usd=None if n % 4 == 0 else 0.01 * n, host=HERE))
    return rows


def _visible(e: Execution, scope: Scope) -> bool:
    return scope.pane_keys is None or e.pane_key in scope.pane_keys or (
        scope.principal is not None and e.principal == scope.principal)


def _matches(e: Execution, q: ExecutionQuery) -> bool:
    at = _at(e)
    return (_visible(e, q.scope)
            and all(getattr(q, f) is None or getattr(e, f) == getattr(q, f)
                    for f in ("agent_name", "pane_key", "status", "triggered_by", "task_id", "trace_id"))
            and (not q.statuses or e.status in q.statuses)
            and (q.since is None or (at is not None and at >= q.since))
            and (q.until is None or (at is not None and at < q.until)))


def _newest_first(rows: list[Execution], order: list[Execution]) -> list[Execution]:
    return sorted(rows, key=lambda e: (_at(e) or 0.0, order.index(e)), reverse=True)


def _reference_list(rows: list[Execution], q: ExecutionQuery) -> tuple[list[Execution], int]:
    found = _newest_first([e for e in rows if _matches(e, q)], rows)
    return found[q.offset:q.offset + q.limit], len(found)


def _failures(rows: list[Execution], q: ExecutionQuery) -> dict[str, list[Execution]]:
    groups: dict[str, list[Execution]] = {}
    for e in _newest_first([e for e in rows if _matches(e, q)], rows):
        if e.status in FAILED_ISH and e.error is not None:
            groups.setdefault(e.error.stack_hash, []).append(e)
    return groups  # each newest first, groups by their newest failure


def _reference_patterns(rows: list[Execution], q: ExecutionQuery) -> list[ErrorPattern]:
    patterns = []
    for hashed, group in _failures(rows, q).items():
        newest = group[0]
        assert newest.error is not None
        patterns.append(ErrorPattern(
            stack_hash=hashed, count=len(group), first_seen=min(_at(e) or 0.0 for e in group),
            last_seen=_at(newest) or 0.0, error_type=newest.error.type, message=newest.error.message,
            example_id=newest.id, example_task_id=newest.task_id, example_trace_id=newest.trace_id))
    return patterns[q.offset:q.offset + q.limit]


def _reference_stats(rows: list[Execution], q: ExecutionQuery) -> list[AgentStats]:
    stats = []
    kinds = {"prompt": 0, "command": 1}
    for agent, kind in sorted({(e.agent_name, e.kind) for e in rows if _matches(e, q)},
                              key=lambda key: (key[0], kinds[key[1]])):
        mine = [e for e in rows if _matches(e, q) and (e.agent_name, e.kind) == (agent, kind)]
        durations = [e.duration_ms for e in mine if e.status not in ("pending", "running") and e.duration_ms is not None]
        last = _newest_first(mine, rows)[0]
        costed = [e.cost_usd for e in mine if e.cost_usd is not None]
        stats.append(AgentStats(
            agent_name=agent, kind=kind, agent_type=last.agent_type, total=len(mine),
            successful=sum(e.status == "success" for e in mine),
            failed=sum(e.status in FAILED_ISH for e in mine), cancelled=sum(e.status == "cancelled" for e in mine),
            running=sum(e.status == "running" for e in mine), pending=sum(e.status == "pending" for e in mine),
            total_cost_usd=sum(costed) if costed else None, cost_known_executions=len(costed),
            total_tokens=sum(e.tokens_used or 0 for e in mine),
            avg_duration_s=sum(durations) / len(durations) / 1000 if durations else None,
            last_execution_at=_at(last), last_execution_status=last.status))
    return stats


def _same_stats(got: list[AgentStats], want: list[AgentStats]) -> None:
    assert [(s.agent_name, s.kind) for s in got] == [(s.agent_name, s.kind) for s in want]
    for g, w in zip(got, want):
        assert msgspec.structs.replace(g, total_cost_usd=0.0, avg_duration_s=None) == \
            msgspec.structs.replace(w, total_cost_usd=0.0, avg_duration_s=None)
        assert (g.total_cost_usd is None) == (w.total_cost_usd is None)
        if w.total_cost_usd is not None:
            assert g.total_cost_usd == pytest.approx(w.total_cost_usd)
        assert (g.avg_duration_s is None) == (w.avg_duration_s is None)
        assert g.avg_duration_s == pytest.approx(w.avg_duration_s)


QUERIES = [
    ExecutionQuery(), ExecutionQuery(limit=7, offset=5), ExecutionQuery(limit=0), ExecutionQuery(offset=200),
    ExecutionQuery(agent_name="agent-1"), ExecutionQuery(pane_key="run/%2"), ExecutionQuery(status="failed"),
    ExecutionQuery(statuses=("pending", "running")), ExecutionQuery(statuses=FAILED_ISH, limit=7, offset=2),
    ExecutionQuery(triggered_by="mcp"),
    ExecutionQuery(task_id="task-a"), ExecutionQuery(trace_id="trace-3"),
    ExecutionQuery(since=BASE + 200, until=BASE + 500), ExecutionQuery(since=BASE + 300, agent_name="agent-0"),
    ExecutionQuery(agent_name="agent-2", status="success", triggered_by="manual"),
    ExecutionQuery(agent_name="nobody"),
]
SCOPES = [
    Scope(pane_keys=frozenset({"run/%1"})),
    Scope(pane_keys=frozenset(), principal="token:ci"),
    Scope(pane_keys=frozenset({"run/%0", "run/%3"}), principal="agent:%1"),
    Scope(pane_keys=frozenset()),
    Scope(principal="token:ci"),  # pane_keys None: everything, whoever it is
]
SCOPED = [msgspec.structs.replace(q, scope=s)
          for s in SCOPES for q in (ExecutionQuery(), ExecutionQuery(limit=5, offset=3),
                                    ExecutionQuery(status="success"), ExecutionQuery(since=BASE + 400),
                                    ExecutionQuery(statuses=FAILED_ISH, limit=4, offset=1))]


def test_every_field_round_trips(db_location: str) -> None:
    full = Execution(
        id="exec_1700000000000_0badf00d", pane_id="%3", pane_key="r1/%3", agent_name="builder", agent_type="claude",
        kind="command", status="failed", triggered_by="schedule", principal="token:ci", message="make test\nnow",
        response="ünïcode ✓", error=ExecutionError(type="exit_status", message="exit 2", stack_hash="abc123"),
        exit_code=2, queued_at=BASE - 1.5, started_at=BASE, completed_at=BASE + 3.25, duration_ms=3250,
        timeout_s=60.0, tokens_used=1234, cost_usd=0.0123, cost_source="estimate", cost_model="gpt-5",
            cost_price_date="2026-11-28", context_used=5000, context_max=200_000,
        session_id="sess-1", tool_calls=["Bash(mkdir -p demo)", "Write(a.py)"], files_written=["a.py"],
        task_id="task-1", trace_id="trace-1", span_id="span-1", attempt=2, idempotency_key="idem-1",
        sources={"tokens_used": "session_log", "response": "screen"}, transcript_bytes=4096,
        transcript_truncated=True, host=HERE)
    defaults = Execution(id="x", pane_id="x", pane_key="x", agent_name="x")
    unset = [f for f in msgspec.structs.fields(Execution) if getattr(full, f.name) == getattr(defaults, f.name)]
    assert unset == []  # the test sets every field, so every column is exercised

    async def test() -> None:
        async with opened(db_location) as store:
            await store.save(full)
            assert await store.get(full.id) == full
            assert await store.by_idempotency_key("token:ci", "r1/%3", "idem-1") == full
            assert await store.by_idempotency_key("token:ci", "r1/%3", "idem-2") is None
            assert await store.get("exec_missing") is None
            ended = msgspec.structs.replace(full, status="success", error=None, tool_calls=[], sources={})
            await store.save(ended)  # replace by id
            assert await store.get(full.id) == ended
            assert (await store.list(ExecutionQuery()))[1] == 1
            transcript = Transcript(data=b"\x78\x9c\x00", raw_bytes=3, truncated=True, extra={"cols": 80})
            await store.save_transcript(full.id, transcript)
            assert await store.transcript(full.id) == transcript
            assert await store.transcript("exec_missing") is None
        async with opened(db_location) as again:
            assert await again.get(full.id) == ended

    run(test)


def test_lists_filters_and_totals_match_the_rows(db_location: str) -> None:
    _lists_match_the_rows(db_location)


def test_lists_of_an_in_memory_database_match_the_rows() -> None:
    _lists_match_the_rows(":memory:")  # its reads queue on the writer: no second connection


def _lists_match_the_rows(location: str) -> None:
    rows = _fleet()

    async def test() -> None:
        async with opened(location) as store:
            for e in random.Random(1).sample(rows, len(rows)):  # saved out of order: order is by time
                await store.save(e)
            for e in rows:  # a second save replaces the row, never adds one
                await store.save(e)
            for q in QUERIES + SCOPED:
                page, total = await store.list(q)
                want_page, want_total = _reference_list(rows, q)
                assert ([e.id for e in page], total) == ([e.id for e in want_page], want_total), q

    run(test)


def test_traces_patterns_failures_and_stats_follow_the_scope(db_location: str) -> None:
    rows = _fleet()

    async def test() -> None:
        async with opened(db_location) as store:
            for e in rows:
                await store.save(e)
            for q in [ExecutionQuery(), ExecutionQuery(limit=2, offset=1), ExecutionQuery(agent_name="agent-2"),
                      ExecutionQuery(since=BASE + 300), ExecutionQuery(status="timeout"), *SCOPED]:
                assert await store.error_patterns(q) == _reference_patterns(rows, q), q
                want = [g[0].id for g in _failures(rows, q).values()][q.offset:q.offset + q.limit]
                assert [e.id for e in await store.unique_failures(q)] == want, q
                _same_stats(await store.stats(q), _reference_stats(rows, q))
            for scope in [EVERYTHING, *SCOPES]:
                for trace in ("trace-0", "trace-3", "trace-9"):
                    attempts = [e for e in rows if e.trace_id == trace and _visible(e, scope)]
                    attempts.sort(key=lambda e: (e.attempt or 0, _at(e) or 0.0))
                    assert await store.by_trace(trace, scope) == attempts

    run(test)


def test_stats_numbers(db_location: str) -> None:
    def e(n: int, status: Status, **kw: Any) -> Execution:
        return Execution(id=f"exec_{n}", pane_id="%1", pane_key="r/%1", agent_name=kw.pop("agent", "a"),
                         status=status, started_at=BASE + n, **kw)

    async def test() -> None:
        async with opened(db_location) as store:
            for row in [e(1, "success", duration_ms=1000, cost_usd=0.5, tokens_used=10),
                        e(2, "failed", duration_ms=3000, tokens_used=5), e(3, "timeout"), e(4, "interrupted"),
                        e(5, "cancelled", cost_usd=0.25), e(6, "running", duration_ms=99_000),
                        e(7, "pending"), e(8, "success", agent="b")]:
                await store.save(row)
            a, b = await store.stats(ExecutionQuery())
            assert a == AgentStats(agent_name="a", total=7, successful=1, failed=3, cancelled=1, running=1,
                                   pending=1, total_cost_usd=0.75, cost_known_executions=2, total_tokens=15,
                                   avg_duration_s=2.0,
                                   last_execution_at=BASE + 7, last_execution_status="pending")
            assert (b.total, b.successful, b.avg_duration_s) == (1, 1, None)
            assert [s.agent_name for s in await store.stats(ExecutionQuery(agent_name="b"))] == ["b"]
            assert await store.stats(ExecutionQuery(since=BASE + 100)) == []

    run(test)


def test_an_idempotency_key_names_one_execution_per_principal_and_pane(db_location: str) -> None:
    from muxd.errors import Conflict

    async def test() -> None:
        async with opened(db_location) as store:
            first = Execution(id="exec_1", idempotency_key="k", principal="token:ci", **ONE_PANE)
            await store.save(first)
            await store.save(msgspec.structs.replace(first, status="running"))  # the same id: fine
            with pytest.raises(Conflict, match="another execution has this idempotency key"):
                await store.save(msgspec.structs.replace(first, id="exec_2"))
            # Another principal's key, or the same key for another pane, is another key.
            theirs = msgspec.structs.replace(first, id="exec_3", principal="agent:%1")
            elsewhere = msgspec.structs.replace(first, id="exec_4", pane_key="r/%2")
            await store.save(theirs)
            await store.save(elsewhere)
            assert (await store.by_idempotency_key("token:ci", "r/%1", "k")) == msgspec.structs.replace(
                first, status="running")
            assert (await store.by_idempotency_key("agent:%1", "r/%1", "k")) == theirs
            assert (await store.by_idempotency_key("token:ci", "r/%2", "k")) == elsewhere
            assert (await store.by_idempotency_key("agent:%1", "r/%2", "k")) is None

    run(test)


def test_interrupt_running_ends_what_a_dead_daemon_left(db_location: str) -> None:
    async def test() -> None:
        async with opened(db_location) as store:
            for row in [Execution(id="exec_run", status="running", started_at=BASE, **ONE_PANE),
                        Execution(id="exec_wait", status="pending", queued_at=BASE, **ONE_PANE),
                        Execution(id="exec_done", status="success", started_at=BASE, **ONE_PANE)]:
                await store.save(row)
            assert await store.interrupt_running(BASE + 2.5) == 2
            assert await store.interrupt_running(BASE + 3) == 0
            ran, waited, done = [await store.get(i) for i in ("exec_run", "exec_wait", "exec_done")]
            error = ExecutionError(type="interrupted", message=INTERRUPTED_MESSAGE,
                                   stack_hash=stack_hash("interrupted", INTERRUPTED_MESSAGE))
            assert ran is not None and waited is not None and done is not None
            assert (ran.status, ran.completed_at, ran.duration_ms, ran.error) == ("interrupted", BASE + 2.5, 2500, error)
            assert (waited.status, waited.duration_ms, waited.error) == ("interrupted", None, error)
            assert done.status == "success"
            assert [p.count for p in await store.error_patterns(ExecutionQuery())] == [2]

    run(test)


def test_a_turns_output_buffer_is_compressed_by_the_store_once_and_stored(db_location: str) -> None:
    output = TranscriptBuffer(100, 30, cap_bytes=300)
    for n in range(60):
        output.add(f"line {n}\r\n".encode())
    execution = Execution(id="exec_buffered", status="success", transcript_bytes=output.kept,
                          transcript_truncated=output.truncated, **ONE_PANE)

    async def test() -> None:
        async with opened(db_location) as store:
            await store.save(execution, output)  # compressed on the writer thread, with the row
            stored = await store.transcript(execution.id)
            assert stored is not None and stored == output.finish()  # the one it made: finished once
            assert stored.raw() == b"".join(f"line {n}\r\n".encode() for n in range(60))[:300]
            assert (stored.raw_bytes, stored.truncated, stored.extra) == (300, True, {"columns": 100, "lines": 30, "codec": "zstd"})
            assert await store.get(execution.id) == execution

    run(test)


def test_prune_by_age_and_by_count_takes_transcripts_along(db_location: str) -> None:
    async def test() -> None:
        async with opened(db_location, prune_batch_rows=3) as store:  # several batches each
            for n in range(20):
                status: Status = "running" if n in (0, 15) else "success"
                await store.save(Execution(id=f"exec_{n:02d}", status=status, started_at=BASE + n, **ONE_PANE))
                await store.save_transcript(f"exec_{n:02d}", Transcript(data=b"x", raw_bytes=1))
            assert await store.prune(older_than=BASE + 10, keep_rows=None) == 9  # 0..9 but the running 0
            ids = [e.id for e in (await store.list(ExecutionQuery(limit=100)))[0]]
            assert ids == [f"exec_{n:02d}" for n in range(19, 9, -1)] + ["exec_00"]
            assert await store.transcript("exec_05") is None and await store.transcript("exec_10") is not None
            # Beyond the newest 4 (19..16): 15..10 and 0, but the running 15 and 0 stay.
            assert await store.prune(older_than=None, keep_rows=4) == 5
            ids = [e.id for e in (await store.list(ExecutionQuery(limit=100)))[0]]
            assert ids == ["exec_19", "exec_18", "exec_17", "exec_16", "exec_15", "exec_00"]
            assert await store.prune(older_than=None, keep_rows=100) == 0
            kept = {f"exec_{n:02d}" for n in range(20) if await store.transcript(f"exec_{n:02d}") is not None}
            assert kept == set(ids)

    run(test)


def test_a_schema_1_database_migrates_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(f"BEGIN; {MIGRATIONS[0]}; PRAGMA user_version = 1; COMMIT;")
    old.execute("INSERT INTO tokens (id, name, hash, kind, tier, created_at) VALUES ('tok_1', 'ci', 'h', 'user', "
                "'admin', 1.0)")
    old.execute("INSERT INTO audit (ts, principal, kind, tool, args_sha256, status) VALUES (1, 'p', 'mcp', 't', "
                "'s', 'ok')")
    old.close()

    async def test() -> None:
        async with opened(path) as store:
            await store.save(Execution(id="exec_1", **ONE_PANE))
            assert (await store.list(ExecutionQuery()))[1] == 1

    run(test)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert db.execute("SELECT id, name FROM tokens").fetchall() == [("tok_1", "ci")]
    assert db.execute("SELECT principal, tool FROM audit").fetchall() == [("p", "t")]
    db.close()


def test_queries_use_their_indexes(tmp_path: Path) -> None:
    """The partial index of failures is only used when a query repeats its WHERE word for word
    (INDEXED BY fails loudly otherwise); lists and stats read an index, never the whole table."""
    from muxd.store import execution_queries as queries
    from muxd.store import execution_tallies as tallies

    async def test() -> None:
        async with opened(tmp_path / "h.db") as store:
            await store.error_patterns(ExecutionQuery())
            await store.unique_failures(ExecutionQuery(since=BASE))

    run(test)
    db = sqlite3.connect(tmp_path / "h.db")
    for sql, params, index in [(*queries.stats(ExecutionQuery(since=BASE)), "executions_agent_kind_status"),
                               (*queries.page(ExecutionQuery(agent_name="a")), "executions_agent_at"),
                               (*queries.page(ExecutionQuery(status="failed")), "executions_status_at"),
                               # the failure family: a stream per status, merged, never a sort of them all
                               (*queries.page(ExecutionQuery(statuses=FAILED_ISH)), "executions_status_at"),
                               (*queries.page(ExecutionQuery()), "executions_at")]:
        plan = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
        assert any(index in step for step in plan) and "SCAN executions" not in plan, plan
    # A token's failures from its panes' and principal's indexes alone (schema migration 11: with
    # `status`, no failure's row is read), a range per fingerprint; its total from the scope counts.
    token = ExecutionQuery(scope=Scope(pane_keys=frozenset({"r/%1"}), principal="agent:%1"), statuses=FAILED_ISH)
    plan = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {queries.error_patterns(token)[0]}",
                                     queries.error_patterns(token)[1])]
    for index in ("executions_failures_pane", "executions_failures_principal"):  # a range per fingerprint
        assert any(f"COVERING INDEX {index}" in step and "stack_hash=?" in step for step in plan), plan
    sql, params = tallies.count(token) or ("", [])
    plan = [r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    assert any("execution_scope_counts" in step for step in plan), plan
    assert not any("executions " in step for step in plan), plan
    db.close()
