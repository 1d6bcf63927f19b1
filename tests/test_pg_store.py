"""The store on PostgreSQL (issue 30), against a private cluster, where it differs from SQLite:
the schema's migrations (applied once, by one of several daemons starting together; a newer
database refused) and their shape (SQLite's, column for column), the placeholders, transactions
that do not nest, and the race a fleet brings that one SQLite writer never sees: two daemons'
sweepers expiring the same leases (each task returned once), judged by the database's clock
whatever each host's says. Everything the queue and knowledge
do, the claim race of 20 connections over 1,000 tasks included, is tests/test_task_store.py and
tests/test_knowledge.py, run on both databases."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec
import pytest

from muxd.errors import Internal
from muxd.executions.record import KINDS, STATUSES, Execution, ExecutionError
from muxd.store import task_store as ts
from muxd.store.database import transaction
from muxd.store.execution_rows import UPSERT, to_row
from muxd.store.pg_connection import PgConnection, connect, psycopg_sql
from muxd.store.pg_schema import PG_MIGRATIONS, migrate, schema_version
from muxd.tasks.model import Task, Verification

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")

NOW = 1_700_000_000.0
A = "agent:%1"


@pytest.fixture
def pg(connect_pg: Callable[[], PgConnection]) -> PgConnection:
    return connect_pg()


def new(c: PgConnection, title: str = "a task", **fields: Any) -> Task:
    args: dict[str, Any] = {"description": "", "plan": None, "priority": 500, "verification": Verification(),
                            "depends_on": [], "context": {}, "created_by": "user:me"}
    return ts.create_task(c, title=title, now=NOW, **{**args, **fields})  # type: ignore[arg-type]


# ---------------------------------------------------------------- the schema

def test_migrations_apply_once_even_when_daemons_start_together(postgres_url: str) -> None:
    starters = 4
    together = threading.Barrier(starters)

    def start() -> int:
        conn = connect(postgres_url)
        try:
            together.wait()
            return migrate(conn)
        finally:
            conn.close()

    with ThreadPoolExecutor(starters) as pool:
        assert list(pool.map(lambda _: start(), range(starters))) == [len(PG_MIGRATIONS)] * starters
    conn = connect(postgres_url)
    try:
        assert conn.execute("SELECT count(*), max(version) FROM muxd_schema").fetchone() == (1, len(PG_MIGRATIONS))
        assert migrate(conn) == schema_version(conn) == len(PG_MIGRATIONS)  # again: nothing to do
    finally:
        conn.close()


def test_a_database_newer_than_this_muxd_is_refused(pg: PgConnection) -> None:
    pg.execute("UPDATE muxd_schema SET version = ?", (len(PG_MIGRATIONS) + 1,))
    with pytest.raises(Internal, match="newer than this muxd"):
        migrate(pg)


def test_placeholders_become_psycopgs_outside_quoted_text() -> None:
    assert psycopg_sql("SELECT ?, '?', \"a?\" FROM t WHERE x LIKE 'a%' AND y = ? % 2") == \
        "SELECT %s, '?', \"a?\" FROM t WHERE x LIKE 'a%%' AND y = %s %% 2"
    assert psycopg_sql("SELECT ? -- the task's id?\nFROM t WHERE a = 'it''s' AND b = ?") == \
        "SELECT %s -- the task's id?\nFROM t WHERE a = 'it''s' AND b = %s"


def test_transactions_do_not_nest(pg: PgConnection) -> None:
    """As on SQLite: on PostgreSQL an inner BEGIN would only warn, and its COMMIT end the outer one."""
    with pytest.raises(RuntimeError, match="do not nest"):
        with transaction(pg, immediate=True):
            pg.execute("INSERT INTO plans (id, name, created_at) VALUES ('p1', 'outer', 0)")
            with transaction(pg):
                pass
    assert pg.execute("SELECT count(*) FROM plans").fetchone() == (0,)  # the outer one rolled back


TABLES = ("plans", "tasks", "task_deps", "task_events", "task_reviews", "knowledge_entries", "task_knowledge", "quotas",
          "tokens", "grants", "audit", "executions", "execution_transcripts", "execution_status_counts",
          "execution_hours", "execution_spans", "failure_counts", "failure_hours", "execution_days",
          "execution_scope_counts")
# FTS5's table is a column and its index on PostgreSQL (pg_schema.py's migration 2); the tallies'
# host, in their keys since PostgreSQL's migration 9 (a SQLite file has one daemon: one writer).
TALLIES_BY_HOST = ("execution_status_counts", "execution_hours", "execution_spans", "failure_counts", "failure_hours",
                   "execution_days", "execution_scope_counts")
PG_ONLY_COLUMNS = {("knowledge_entries", "words"), *((table, "host") for table in TALLIES_BY_HOST)}
PG_ONLY_INDEXES = {"knowledge_words"}


def test_the_tables_are_sqlites_column_for_column(pg: PgConnection, store: sqlite3.Connection) -> None:
    """Two schema texts, one shape: the same columns in the same order, the same named indexes."""
    names = ", ".join(f"'{table}'" for table in TABLES)
    on_pg = {table: [column for column, in pg.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        (table,)) if (table, column) not in PG_ONLY_COLUMNS] for table in TABLES}
    on_sqlite = {table: [row[1] for row in store.execute(f"PRAGMA table_info({table})")] for table in TABLES}
    assert on_pg == on_sqlite
    assert all(pg.execute("SELECT 1 FROM information_schema.columns WHERE table_name = ? AND column_name = 'host'",
                          (table,)).fetchone() for table in TALLIES_BY_HOST)
    # The host that wrote a row (store/hosts.py), on every table a daemon writes as its own.
    assert [t for t in TABLES if "host" in on_pg[t]] == ["tasks", "task_events", "task_reviews", "knowledge_entries",
                                                         "tokens", "grants", "audit", "executions"]
    pg_indexes = {name for name, in pg.execute(
        f"SELECT indexname FROM pg_indexes WHERE tablename IN ({names}) AND indexname NOT LIKE '%\\_pkey' "
        f"AND indexname NOT LIKE '%\\_key'")}
    sqlite_indexes = {name for name, in store.execute(
        f"SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ({names}) "
        f"AND name NOT LIKE 'sqlite_autoindex%'")}
    assert pg_indexes - PG_ONLY_INDEXES == sqlite_indexes and "tasks_leases" in pg_indexes


# ---------------------------------------------------------------- tasks and claims

def test_two_sweepers_return_each_expired_lease_once(connect_pg: Callable[[], PgConnection]) -> None:
    pg = connect_pg()
    held = [ts.claim(pg, new(pg, f"task {n}").id, A, 60, NOW)[0].id for n in range(300)]
    sweepers = 2
    together = threading.Barrier(sweepers)

    def sweep(_: int) -> list[str]:
        db = connect_pg()
        together.wait()
        returned: list[str] = []
        while expired := ts.expire_leases(db, NOW + 61, max_attempts=3):  # until neither finds any
            returned += expired
        return returned

    with ThreadPoolExecutor(sweepers) as pool:
        first, second = pool.map(sweep, range(sweepers))
    assert sorted(first + second) == sorted(held) and not set(first) & set(second)
    expiries = pg.execute("SELECT task_id FROM task_events WHERE kind = 'lease_expired'")
    events = Counter(task_id for (task_id,) in expiries)
    assert set(events.values()) == {1} and len(events) == len(held)
    states = pg.execute("SELECT state, claimed_by, count(*) FROM tasks GROUP BY 1, 2").fetchall()
    assert states == [("ready", None, len(held))]


def test_daemons_making_the_same_new_plan_at_once_share_it(connect_pg: Callable[..., PgConnection]) -> None:
    makers = 4
    together = threading.Barrier(makers)

    def make(n: int) -> Task:
        db = connect_pg(host=f"host{n}")
        together.wait()
        return new(db, f"task {n}", plan="launch")

    with ThreadPoolExecutor(makers) as pool:
        made = list(pool.map(make, range(makers)))
    assert len({task.plan_id for task in made}) == 1 and {task.plan for task in made} == {"launch"}


def _database_now(c: PgConnection) -> float:
    return float(c.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()[0])


def test_leases_are_judged_by_the_databases_clock_whatever_each_hosts_says(
        connect_pg: Callable[..., PgConnection]) -> None:
    """Two hosts whose clocks are an hour apart, either side of the database's: a lease runs from
    the database's now, neither host's sweeper returns it early, and once it lapses by the
    database's clock the slow host's sweeper returns it, though its own clock says it has an hour left."""
    slow, fast = connect_pg(host="slow"), connect_pg(host="fast")
    for db in (slow, fast):
        db.database_clock = True  # as a daemon's own connections (the fixture pins the caller's)
    before = _database_now(slow)
    held, fresh = ts.claim(slow, new(slow).id, A, 60, before - 3600)
    after = _database_now(slow)
    assert fresh and before <= held.claimed_at <= after and held.lease_expires_at == held.claimed_at + 60
    assert ts.expire_leases(fast, after + 3600, max_attempts=3) == []
    assert ts.claim_next(fast, "agent:%2", 60, after + 3600) is None  # the fast host sees it held too
    # The lease lapses, by the database's clock.
    slow.execute("UPDATE tasks SET lease_expires_at = extract(epoch FROM now()) - 1 WHERE id = ?", (held.id,))
    assert ts.expire_leases(slow, before - 3600, max_attempts=3) == [held.id]
    events = slow.execute("SELECT kind, host FROM task_events WHERE task_id = ? ORDER BY seq", (held.id,)).fetchall()
    assert events == [("created", "slow"), ("claimed", "slow"), ("lease_expired", "slow")]


def test_a_connection_that_pins_the_time_takes_its_callers_clock(pg: PgConnection) -> None:
    held, _ = ts.claim(pg, new(pg).id, A, 60, NOW)  # the fixture's connections pin the time, as SQLite's take it
    assert (held.claimed_at, held.lease_expires_at) == (NOW, NOW + 60)
    assert ts.expire_leases(pg, NOW + 61, max_attempts=3) == [held.id]


# ---------------------------------------------------------------- the history's tallies

TALLIES = {"execution_status_counts": "status, n", "failure_counts": "stack_hash, n",
           "failure_hours": "stack_hash, hour, n",
           "execution_hours": "agent_name, kind, status, hour, n, round(cost::numeric, 6), costs, tokens, "
                              "duration_ms, durations",
           "execution_spans": "span, bucket, agent_name, kind, n, round(cost::numeric, 6), failures, tokens, costs",
           "execution_days": "agent_name, kind, status, day, n, round(cost::numeric, 6), costs, tokens, "
                             "duration_ms, durations",
           "execution_scope_counts": "pane_key, principal, status, n"}


FLOAT_COSTS = ("execution_hours", "execution_spans", "execution_days")  # cost: 6th column


def _history(seed: int) -> list[Execution]:
    """Executions of every status, kind, hour and day edge (5399.9 s is hour 1, 129599.9 s day 1:
    floor, never rounded)."""
    pick = random.Random(seed)
    return [Execution(id=f"exec_{n}_{n:08x}", pane_id="%1", pane_key="run/%1", agent_name=pick.choice("ab"),
                      kind=pick.choice(KINDS), status=pick.choice(STATUSES), triggered_by="manual",
                      started_at=pick.choice([None, 5399.9, 5400.0, 7199.5, 129_599.9, NOW + n]),
                      cost_usd=pick.choice([None, 0.25, 1.5]), tokens_used=pick.choice([None, 100]),
                      duration_ms=pick.choice([None, 20]),
                      error=ExecutionError(type="boom", message="x", stack_hash=pick.choice("hk")))
            for n in range(300)]


def test_the_history_tallies_are_kept_as_sqlites_triggers_keep_them(
        connect_sqlite: Callable[[], sqlite3.Connection], pg: PgConnection) -> None:
    """The same writes on both databases, inserts, updates that move a row between tallies or not
    and deletes: every tally reads the same on PostgreSQL as on SQLite."""
    sqlite_db = connect_sqlite()
    history = _history(1)
    moved = [msgspec.structs.replace(e, status=s.status, started_at=s.started_at, cost_usd=s.cost_usd)
             for e, s in zip(history[::2], _history(2)[::2])]
    for db in (sqlite_db, pg):
        with transaction(db):
            db.executemany(UPSERT, [to_row(e) for e in history])
            db.executemany(UPSERT, [to_row(e) for e in moved])
            db.executemany("DELETE FROM executions WHERE id = ?", [(e.id,) for e in history[::7]])
    for table, columns in TALLIES.items():
        on_sqlite = sorted(tuple(row) for row in sqlite_db.execute(
            f"SELECT {columns.replace('round(cost::numeric, 6)', 'round(cost, 6)')} FROM {table}"))
        on_pg = sorted((*row[:5], float(row[5]), *row[6:]) if table in FLOAT_COSTS
                       else tuple(row)
                       for row in pg.execute(f"SELECT {columns} FROM {table}"))
        assert on_pg == on_sqlite and on_pg, table
    assert pg.execute("SELECT hour FROM execution_hours WHERE hour = 1 LIMIT 1").fetchone() == (1,)
    assert pg.execute("SELECT bucket FROM execution_spans WHERE span = 86400 AND bucket = 1").fetchone() == (1,)
