"""The history's tallies on a PostgreSQL that several daemons share (pg_schema.py's migration 9):
keyed by host, so that two hosts' batches never update the same tally row, whatever panes their
agents share names with; the fleet's answers sum the hosts' rows; the migration recounts the
tallies a database had from its rows. SQLite's tallies, and that both databases keep them alike
for one host, are tests/test_execution_tallies.py and tests/test_pg_store.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from decimal import Decimal

import msgspec
import pytest

from muxd.executions.record import Execution, ExecutionError
from muxd.store import execution_queries as queries
from muxd.store import execution_tallies as tallies
from muxd.store.database import transaction
from muxd.store.execution_rows import UPSERT, to_row
from muxd.store.execution_queries import Sql
from muxd.store.execution_store import ExecutionQuery, Scope
from muxd.store.hosts import use_host
from muxd.store.pg_connection import PgConnection
from muxd.store.pg_connection import connect as pg_connect
from muxd.store.pg_history_sql import postgres_text
from muxd.store.pg_schema import PG_MIGRATIONS, migrate
from muxd.store.save_batches import save_rows
from muxd.testing.postgres import PostgresCluster

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")

NOW = 1_700_000_000.0
PANES, ROUNDS = 30, 12  # each round a batch starting a turn on every pane, then one ending them
BOUND_S = 90.0  # both hosts' rounds, on a loaded machine; a deadlock costs 1 s each (deadlock_timeout)
_HOUR = "coalesce(floor(at / 3600)::bigint, -1)"
_SPANS = "unnest(ARRAY[900, 3600, 21600, 86400]) span"
_FAILED = "status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL"
# Each tally's rows per host, and the same counted from the executions (a status's count stays at 0).
RECOUNTS = {
    "execution_status_counts": ("SELECT status, host, n FROM execution_status_counts WHERE n <> 0",
                                "SELECT status, host, count(*) FROM executions GROUP BY 1, 2"),
    "execution_hours": ("SELECT agent_name, kind, status, hour, host, n, costs, tokens, durations FROM execution_hours",
                        f"SELECT agent_name, kind, status, {_HOUR}, host, count(*), count(cost_usd), "
                        "coalesce(sum(tokens_used), 0)::bigint, count(duration_ms) FROM executions "
                        "GROUP BY 1, 2, 3, 4, 5"),
    "execution_spans": ("SELECT span, bucket, agent_name, kind, host, n, failures, tokens, costs FROM execution_spans",
                        f"SELECT span, coalesce(floor(at / span)::bigint, -1), agent_name, kind, host, count(*), "
                        "count(*) FILTER (WHERE status IN ('failed', 'timeout', 'interrupted')), "
                        f"coalesce(sum(tokens_used), 0)::bigint, count(cost_usd) FROM executions, {_SPANS} "
                        "GROUP BY 1, 2, 3, 4, 5"),
    "execution_days": ("SELECT agent_name, kind, status, day, host, n, costs, tokens, durations FROM execution_days",
                       f"SELECT agent_name, kind, status, {_HOUR} / 24, host, count(*), count(cost_usd), "
                       "coalesce(sum(tokens_used), 0)::bigint, count(duration_ms) FROM executions "
                       "GROUP BY 1, 2, 3, 4, 5"),
    "execution_scope_counts": ("SELECT pane_key, principal, status, host, n FROM execution_scope_counts",
                               "SELECT pane_key, coalesce(principal, ''), status, host, count(*) FROM executions "
                               "GROUP BY 1, 2, 3, 4"),
    "failure_counts": ("SELECT stack_hash, host, n FROM failure_counts",
                       f"SELECT stack_hash, host, count(*) FROM executions WHERE {_FAILED} GROUP BY 1, 2"),
    "failure_hours": ("SELECT stack_hash, hour, host, n FROM failure_hours",
                      f"SELECT stack_hash, {_HOUR}, host, count(*) FROM executions WHERE {_FAILED} GROUP BY 1, 2, 3"),
}


def _turns(host: str, round_: int) -> list[Execution]:
    """A turn on each pane %0 … (agents nobody named go by their pane's id: the same names on every
    host), some failing with one of two fingerprints."""
    return [Execution(id=f"exec_{host}_{round_}_{i:02d}", pane_id=f"%{i}", pane_key=f"run/%{i}", agent_name=f"%{i}",
                      kind="prompt", status="running", triggered_by="mcp", started_at=NOW + round_, tokens_used=10)
            for i in range(PANES)]


def _ended(e: Execution, i: int) -> Execution:
    failed = i % 4 == 0
    error = ExecutionError(type="boom", message="x", stack_hash="hk"[i % 8 // 4]) if failed else None
    return msgspec.structs.replace(e, status="failed" if failed else "success", completed_at=NOW + 2_000,
                                   duration_ms=5, error=error)


def _rows(c: PgConnection, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(int(v) if isinstance(v, Decimal) else v for v in row) for row in c.execute(sql))


def _stats(c: PgConnection, built: Sql) -> object:
    sql, params = built
    return queries.fold_stats(c.execute(postgres_text(sql), params).fetchall())


def _assert_recounted(c: PgConnection) -> None:
    for table, (kept, counted) in RECOUNTS.items():
        assert _rows(c, kept) == _rows(c, counted) and _rows(c, kept), table


def test_two_hosts_saving_the_same_pane_names_in_opposite_orders_do_not_deadlock(
        connect_pg: Callable[..., PgConnection]) -> None:
    """Two daemons' batches start and end turns on panes of the same names at once, one host's in
    the other's reverse order: as shipped before migration 9 they took the same tally rows (the
    `running` count, each pane's hour) in opposite orders and PostgreSQL aborted one as deadlocked."""
    hosts = {"alpha": connect_pg(host="alpha"), "beta": connect_pg(host="beta")}
    together = threading.Barrier(len(hosts), timeout=BOUND_S)
    failures: list[BaseException] = []

    def daemon(host: str, c: PgConnection) -> None:
        try:
            for round_ in range(ROUNDS):
                turns = _turns(host, round_)
                order = (lambda rows: rows) if host == "alpha" else (lambda rows: rows[::-1])
                together.wait()
                save_rows(c, order([(e, None) for e in turns]))
                together.wait()
                save_rows(c, order([(_ended(e, i), None) for i, e in enumerate(turns)]))
        except BaseException as exc:  # noqa: BLE001 (told to the test: psycopg's DeadlockDetected, a timeout)
            failures.append(exc)
            together.abort()

    threads = [threading.Thread(target=daemon, args=item) for item in hosts.items()]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND_S)
    assert not any(t.is_alive() for t in threads) and time.monotonic() - began < BOUND_S
    assert failures == []
    c = hosts["alpha"]
    assert c.execute("SELECT count(*) FROM executions").fetchone() == (2 * ROUNDS * PANES,)
    _assert_recounted(c)
    # The fleet's answers sum the hosts' rows: a total, a fingerprint's failures; a host's total is its rows'.
    everything = ExecutionQuery(limit=10)
    fleet, beta = tallies.count(everything), tallies.count(ExecutionQuery(host="beta"), by_host=True)
    assert fleet is not None and beta is not None
    assert (c.execute(*fleet).fetchone()[0], c.execute(*beta).fetchone()[0]) == (2 * ROUNDS * PANES, ROUNDS * PANES)
    # Whole days (migration 11), whole hours, a part-hour: a host's stats are its rows'.
    for since in (None, NOW - 7_300, NOW + 1.5, NOW - 3 * 86_400 - 5_000.5):
        of_beta = ExecutionQuery(host="beta", since=since)
        assert tallies.covers(of_beta, by_host=True)
        from_tallies = _stats(c, tallies.stats(of_beta))
        assert from_tallies == _stats(c, queries.stats(of_beta)) and from_tallies
        assert from_tallies != _stats(c, tallies.stats(ExecutionQuery(since=since)))  # the fleet's: both hosts'
    # A token's total from the scope counts (migration 11): both hosts' rows of its panes, once each.
    token = ExecutionQuery(scope=Scope(pane_keys=frozenset({"run/%1", "run/%2"}), principal="nobody"),
                           statuses=("success",))
    scoped = tallies.count(token, by_host=True)
    assert scoped is not None
    want = c.execute(postgres_text(queries.count(token, postgres=True)[0]), queries.count(token, postgres=True)[1])
    assert c.execute(postgres_text(scoped[0]), scoped[1]).fetchone()[0] == want.fetchone()[0] > 0
    sql, params = tallies.error_patterns(everything)
    patterns = {h: int(n) for h, n, *_ in c.execute(postgres_text(sql), params)}
    assert patterns == {h: int(n) for h, n in c.execute(
        f"SELECT stack_hash, count(*) FROM executions WHERE {_FAILED} GROUP BY 1")} == {"h": 96, "k": 96}


def test_migration_9_recounts_each_hosts_tallies_from_the_rows(postgres_cluster: PostgresCluster) -> None:
    """A database of migration 8, with the history of two hosts: migrated, each host has its own
    tally rows, equal to a count of its executions (migration 10's timeline tallies too)."""
    name = postgres_cluster.create_database()
    c = pg_connect(postgres_cluster.url(name))
    try:
        with transaction(c):
            c.execute("CREATE TABLE muxd_schema (version integer NOT NULL)")
            for script in PG_MIGRATIONS[:8]:
                c.execute(script)
            c.execute("INSERT INTO muxd_schema (version) VALUES (8)")
        for host in ("alpha", "beta"):
            use_host(c, host)
            turns = _turns(host, 0)
            c.executemany(UPSERT, [to_row(_ended(e, i)) for i, e in enumerate(turns)][: 20 if host == "beta" else None])
        assert c.execute("SELECT n FROM execution_status_counts WHERE status = 'success'").fetchone() == (37,)
        assert migrate(c) == len(PG_MIGRATIONS) == 11
        _assert_recounted(c)
        assert _rows(c, "SELECT host, n FROM execution_status_counts WHERE status = 'success'") == [
            ("alpha", 22), ("beta", 15)]
    finally:
        c.close()
        postgres_cluster.drop_database(name)
