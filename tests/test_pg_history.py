"""The execution history on PostgreSQL (issue 30) where it differs from SQLite's: the read SQL as
PostgreSQL reads it (pg_history_sql.py), NULLs ordered alike on both, a write that waits on
another daemon's row lock while reads go on, a conflicting save in a batch, failures in one line.
The history's behaviour itself is tested on both databases in test_store_executions*.py."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import msgspec
import pytest
from test_store_executions import BASE, ONE_PANE, QUERIES, SCOPED, opened, run

from muxd.errors import Conflict, StoreUnavailable
from muxd.executions.record import Execution
from muxd.store import execution_queries as queries
from muxd.store import execution_tallies as tallies
from muxd.store.execution_rows import UPSERT, to_row
from muxd.store.execution_store import ExecutionQuery, Scope
from muxd.store.pg_connection import PgConnection
from muxd.store.pg_database import PgDatabase
from muxd.store.pg_connection import connect as pg_connect
from muxd.store import execution_timeline
from muxd.store.pg_history_sql import RULES, postgres_text
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.store.opening import open_database
from muxd.testing.postgres import PostgresCluster

SHORT_BUSY_TIMEOUT_S = 0.2
WAIT_S = 30.0
READS_TO_MEET_EVERY_READER = 8  # reads in a row: the two reader threads take turns at the queue
SQLITE_ONLY = ("INDEXED BY", "json_each", "json_extract", "json_array(", "CAST(", "total(", "WHERE 1", "WHERE 0")


def _history_sql() -> list[tuple[str, list[object]]]:
    """Every read statement the store builds for the test queries (each builder, tallied or not)."""
    built = []
    for query in [*QUERIES, *SCOPED, ExecutionQuery(since=BASE + 1), ExecutionQuery(since=BASE + 1, agent_name="a")]:
        if queries.sees_nothing(query.scope):
            continue
        # A scope's failures as PostgreSQL's store asks (SQLite's read them per term and fingerprint).
        built += [queries.page(query), queries.count(query), queries.error_patterns(query, postgres=True),
                  queries.unique_failures(query, postgres=True), queries.stats(query),
                  queries.page(query, postgres=True), queries.count(query, postgres=True)]
        if tallies.covers(query):
            built.append(tallies.stats(query))
        if tallies.covers(query, by_agent=False, failures=True):
            built.append(tallies.error_patterns(query))
        if (counted := tallies.count(query)) is not None:
            built.append(counted)
        timeline_query = msgspec.structs.replace(query, since=(query.since or BASE) // 3600 * 3600)
        off_span = msgspec.structs.replace(timeline_query, since=timeline_query.since + 60)
        built += [execution_timeline.timeline(timeline_query, 3600, by_host=True),  # tallied where they cover it
                  execution_timeline.timeline(timeline_query, 900, by_host=True),
                  execution_timeline.timeline(off_span, 900, by_host=True)]  # the rows
    return built


def test_every_history_query_is_postgresqls_and_every_rule_is_needed(connect_pg: Callable[[], PgConnection]) -> None:
    pg = connect_pg()
    built = _history_sql()
    for pattern, _ in RULES:  # no rule is dead: each rewrites some statement
        assert any(pattern.search(sql) for sql, _ in built), pattern.pattern
    for sql, params in built:
        text = postgres_text(sql)
        assert not [word for word in SQLITE_ONLY if word in text], text
        pg.execute(f"EXPLAIN {text}", params)  # PostgreSQL parses and plans it (types, aliases)


def test_a_row_with_no_time_is_the_oldest_on_both_databases(db_location: str) -> None:
    """PostgreSQL sorts NULLs first in descending order, SQLite last: the shared SQL says SQLite's."""
    timeless = Execution(id="exec_timeless", status="success", **ONE_PANE)
    rows = [Execution(id=f"exec_{n}", status="success" if n else "failed", started_at=BASE + n, **ONE_PANE)
            for n in range(2)]

    async def test() -> None:
        async with opened(db_location) as store:
            for row in (rows[0], timeless, rows[1]):
                await store.save(row)
            newest_first = ["exec_1", "exec_0", "exec_timeless"]
            for query in (ExecutionQuery(), ExecutionQuery(statuses=("success", "failed"))):  # one stream, merged streams
                assert [e.id for e in (await store.list(query))[0]] == newest_first, query
            assert await store.prune(older_than=None, keep_rows=2) == 1
            assert [e.id for e in await store.page(ExecutionQuery())] == newest_first[:2]

    run(test)


def test_a_write_waits_out_another_daemons_row_lock_while_reads_go_on(postgres_url: str) -> None:
    first = Execution(id="exec_first", status="running", started_at=BASE, **ONE_PANE)
    ended = msgspec.structs.replace(first, status="success", completed_at=BASE + 1)

    async def test() -> None:
        db = open_database(postgres_url, busy_timeout_s=SHORT_BUSY_TIMEOUT_S)
        store = SqliteExecutionStore(db)
        other = pg_connect(postgres_url)  # another daemon, in the middle of a transaction on that row
        try:
            await store.save(first)
            other.execute("BEGIN")
            other.execute("UPDATE executions SET message = 'theirs' WHERE id = ?", (first.id,))
            with pytest.raises(StoreUnavailable) as caught:
                await asyncio.wait_for(store.save(ended), WAIT_S)
            message = str(caught.value)
            assert message.startswith("the database is locked: saving exec_first: ") and "\n" not in message
            assert caught.value.detail["reason"] == "locked"
            assert await asyncio.wait_for(store.get(first.id), WAIT_S) == first  # the last commit's
            other.execute("ROLLBACK")
            await store.save(ended)
            assert await store.get(first.id) == ended
        finally:
            other.close()
            store.close()
            db.close()

    run(test)


def test_a_conflicting_save_in_a_batch_fails_alone_on_postgresql(postgres_url: str) -> None:
    """The idempotency index's UniqueViolation is psycopg's: the batch's rows are written again one
    by one and only the twin fails, as a Conflict."""
    first = Execution(id="exec_1", idempotency_key="k", principal="token:ci", **ONE_PANE)

    async def test() -> None:
        async with opened(postgres_url) as store:
            await store.save(first)
            db = store._db  # noqa: SLF001 (the writer, held so that both saves wait together)
            release = threading.Event()
            held = db.run_soon(lambda _c: release.wait(WAIT_S))
            twin = asyncio.ensure_future(store.save(msgspec.structs.replace(first, id="exec_2")))
            other = asyncio.ensure_future(store.save(Execution(id="exec_3", **ONE_PANE)))
            await asyncio.sleep(0)  # both saves queued (a turn of the loop, no timing)
            release.set()
            with pytest.raises(Conflict, match="another execution has this idempotency key"):
                await asyncio.wait_for(twin, WAIT_S)
            await asyncio.wait_for(other, WAIT_S)
            await asyncio.wrap_future(held)
            assert await store.get("exec_3") is not None and await store.get("exec_2") is None

    run(test)


def test_a_failed_read_on_postgresql_is_one_line(postgres_url: str) -> None:
    async def test() -> None:
        async with opened(postgres_url) as store:
            other = pg_connect(postgres_url)
            other.execute("DROP TABLE executions CASCADE")
            other.close()
            with pytest.raises(StoreUnavailable, match=r'^the database failed: reading exec_x: relation '
                                                       r'"executions" does not exist'):
                await store.get("exec_x")
            with pytest.raises(StoreUnavailable) as caught:
                await store.stats(ExecutionQuery())
            assert "\n" not in str(caught.value)

    run(test)


def test_newest_first_pages_and_prune_read_their_index_in_order(connect_pg: Callable[[], PgConnection]) -> None:
    """pg_schema migration 6: each index by time, read backwards, is the newest-first order itself,
    so a page reads its LIMIT rows instead of sorting every row it matches; prune's oldest-first too."""
    pg = connect_pg()
    rows = [Execution(id=f"exec_{n:05d}", agent_name=f"agent-{n % 5}", pane_id="%1", pane_key=f"run/%{n % 7}",
                      status="failed" if n % 3 else "success", started_at=BASE + n) for n in range(5000)]
    pg.executemany(UPSERT, [to_row(e) for e in rows])
    pg.execute("ANALYZE executions")
    for query in [ExecutionQuery(), ExecutionQuery(agent_name="agent-1"), ExecutionQuery(status="failed"),
                  ExecutionQuery(pane_key="run/%3", offset=40)]:  # (the planner picks which index by time)
        sql, params = queries.page(query)
        plan = "\n".join(line for line, in pg.execute(f"EXPLAIN {postgres_text(sql)}", params))
        assert "Index Scan Backward using executions_" in plan and "Sort" not in plan, plan
    plan = "\n".join(line for line, in pg.execute(
        "EXPLAIN SELECT seq, id FROM executions WHERE status NOT IN ('pending', 'running') AND at < ? "
        "ORDER BY at NULLS FIRST, seq LIMIT 100", (BASE + 4000,)))
    assert "Index Scan using executions_at" in plan and "Sort" not in plan, plan


def test_a_timeline_reads_its_tallies_or_a_scopes_covering_indexes(connect_pg: Callable[[], PgConnection]) -> None:
    """pg_schema migration 10: the fleet's timeline over 30 days by day, or 6 hours by 15 minutes,
    is one range of the timeline's tallies; a token's reads a range of its panes' and of its
    principal's index, never every execution in the window. (Which of the two indexes on each the
    planner takes depends on the visibility map: the covering one once autovacuum has marked the
    pages, as a test's VACUUM does not here.)"""
    pg = connect_pg()
    rows = [Execution(id=f"exec_{n:05d}", agent_name=f"agent-{n % 5}", pane_id="%1", pane_key=f"run/%{n % 40}",
                      principal=f"agent:%{n % 30}", status="failed" if n % 9 == 0 else "success",
                      started_at=BASE + n * 97, tokens_used=n, cost_usd=0.01) for n in range(20_000)]
    pg.executemany(UPSERT, [to_row(e) for e in rows])
    pg.execute("VACUUM ANALYZE executions")
    pg.execute("VACUUM ANALYZE execution_spans")
    end = BASE + 20_000 * 97
    day_since = end // 86_400 * 86_400 - 29 * 86_400
    for query, bucket_s in ((ExecutionQuery(since=day_since), 86_400), (ExecutionQuery(since=end // 900 * 900 - 6 * 3600), 900)):
        sql, params = execution_timeline.timeline(query, bucket_s, by_host=True)
        plan = "\n".join(line for line, in pg.execute(f"EXPLAIN {postgres_text(sql)}", params))
        assert "execution_spans_pkey" in plan and " on executions " not in plan, plan
    token = ExecutionQuery(since=end // 3600 * 3600 - 23 * 3600,
                           scope=Scope(pane_keys=frozenset({"run/%3", "run/%4"}), principal="agent:%7"))
    sql, params = execution_timeline.timeline(token, 3600, by_host=True)
    plan = "\n".join(line for line, in pg.execute(f"EXPLAIN {postgres_text(sql)}", params))
    assert "Seq Scan" not in plan and plan.count("Index Cond: ((pane_key = ANY ($0)) AND (at >= ") == 1, plan
    assert plan.count("Index Cond: ((principal = 'agent:%7'::text) AND (at >= ") == 1, plan


def test_reads_and_writes_come_back_with_the_server_without_a_restart_of_muxd() -> None:
    """The server stops: reads and saves fail in one line (unreachable); it starts again: the next
    read answers at once, whichever reader's connection broke meanwhile (it is replaced)."""
    saved = [Execution(id=f"exec_{n}", status="success", started_at=BASE + n, **ONE_PANE) for n in range(3)]

    async def test(cluster: PostgresCluster, store: SqliteExecutionStore) -> None:
        await store.save(saved[0])
        for _ in range(READS_TO_MEET_EVERY_READER):  # each reader has a connection
            assert await store.get(saved[0].id) == saved[0]
        cluster.stop_server()
        for attempt in (store.get(saved[0].id), store.save(saved[1])):
            with pytest.raises(StoreUnavailable) as caught:
                await asyncio.wait_for(attempt, WAIT_S)
            assert caught.value.detail["reason"] == "unreachable" and "\n" not in caught.value.message
        cluster.start_server()
        for _ in range(READS_TO_MEET_EVERY_READER):
            assert await store.get(saved[0].id) == saved[0]
        await store.save(saved[2])
        assert [e.id for e in await store.page(ExecutionQuery())] == ["exec_2", "exec_0"]

    with PostgresCluster() as cluster:
        db = PgDatabase(cluster.url(cluster.create_database()), busy_timeout_s=2.0)
        store = SqliteExecutionStore(db, reader_threads=2)
        try:
            run(lambda: test(cluster, store))
        finally:
            store.close()
            db.close()
