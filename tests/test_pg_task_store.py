"""The task queue on PostgreSQL (issue 30), against a private cluster: the schema's migrations
(applied once, by one of several daemons starting together; a newer database refused), a task
read back whole, the claim's refusals, and the races a fleet brings: 20 connections claiming
1,000 tasks (exactly one winner each, none lost), and two daemons' sweepers expiring the same
leases (each task returned once, neither waiting on the other)."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from muxd.errors import Internal, TaskAlreadyClaimed
from muxd.store import task_store as ts
from muxd.store.pg_connection import PgConnection, connect, psycopg_sql
from muxd.store.pg_schema import PG_MIGRATIONS, migrate, schema_version
from muxd.tasks.model import Task, Verification
from muxd.testing.claim_race import race_connections

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")

NOW = 1_700_000_000.0
A, B = "agent:%1", "agent:%2"


@pytest.fixture
def connect_pg(postgres_url: str) -> Iterator[Callable[[], PgConnection]]:
    """Opens connections to one migrated database of the private cluster; all closed after."""
    opened: list[PgConnection] = []

    def open_one() -> PgConnection:
        conn = connect(postgres_url)
        if not opened:
            migrate(conn)
        opened.append(conn)
        return conn

    yield open_one
    for conn in opened:
        conn.close()


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


TASK_TABLES = ("plans", "tasks", "task_deps", "task_events", "task_reviews")


def test_the_task_tables_are_sqlites_column_for_column(pg: PgConnection, store: sqlite3.Connection) -> None:
    """Two schema texts, one shape: the same columns in the same order, the same named indexes."""
    names = ", ".join(f"'{table}'" for table in TASK_TABLES)
    on_pg = {table: [column for column, in pg.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        (table,))] for table in TASK_TABLES}
    on_sqlite = {table: [row[1] for row in store.execute(f"PRAGMA table_info({table})")] for table in TASK_TABLES}
    assert on_pg == on_sqlite
    pg_indexes = {name for name, in pg.execute(
        f"SELECT indexname FROM pg_indexes WHERE tablename IN ({names}) AND indexname NOT LIKE '%\\_pkey' "
        f"AND indexname NOT LIKE '%\\_key'")}
    sqlite_indexes = {name for name, in store.execute(
        f"SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ({names}) "
        f"AND name NOT LIKE 'sqlite_autoindex%'")}
    assert pg_indexes == sqlite_indexes and "tasks_leases" in pg_indexes


# ---------------------------------------------------------------- tasks and claims

def test_a_task_reads_back_whole_and_moves_as_on_sqlite(pg: PgConnection) -> None:
    first = new(pg, "Fix the cache", plan="release-1", priority=7, context={"repo": "x", "n": 1.5},
                verification=Verification(kind="commands", commands=["make test"], timeout_s=60.0))
    second = new(pg, "then this", plan=first.plan_id, depends_on=[first.id])
    assert ts.get_task(pg, first.id) == first and ts.get_task(pg, second.id) == second
    assert (second.plan, second.depends_on) == ("release-1", [first.id])
    # The dependent task waits for the first one.
    assert [t.id for t in ts.next_actionable(pg, plan="release-1", priority_lte=None, limit=10, now=NOW)] == [first.id]
    claimed, fresh = ts.claim(pg, first.id, A, 60, NOW)
    assert fresh and (claimed.state, claimed.claimed_by, claimed.lease_expires_at, claimed.attempts) == \
        ("claimed", A, NOW + 60, 1)
    assert ts.claim(pg, first.id, A, 60, NOW + 1) == (claimed, False)  # its holder again: unchanged
    with pytest.raises(TaskAlreadyClaimed) as caught:
        ts.claim(pg, first.id, B, 60, NOW + 1)
    assert caught.value.detail["holder"] == A
    assert [e.kind for e in ts.task_events(pg, first.id)] == ["created", "claimed"]
    page, total = ts.list_tasks(pg, states=("claimed",), plan=None, claimed_by=A, limit=10, offset=0, now=NOW)
    assert ([t.id for t in page], total) == ([first.id], 1)


def test_racing_connections_claim_each_task_exactly_once(connect_pg: Callable[[], PgConnection]) -> None:
    pg = connect_pg()
    ids = {new(pg, f"task {n}", priority=n % 10).id for n in range(1000)}
    race = race_connections(connect_pg, 20, now=NOW)
    claims = [task_id for won in race.wins for task_id in won]
    assert len(claims) == 1000 and set(claims) == ids                          # none lost, none twice
    assert race.lost_races > 0 and sum(1 for won in race.wins if won) > 1       # they really raced
    rows = pg.execute("SELECT state, attempts, count(*) FROM tasks GROUP BY state, attempts").fetchall()
    assert rows == [("claimed", 1, 1000)]
    holders = dict(pg.execute("SELECT id, claimed_by FROM tasks").fetchall())
    assert holders == {task_id: f"agent:%{n}" for n, won in enumerate(race.wins) for task_id in won}
    per_task = Counter(task_id for (task_id,) in pg.execute("SELECT task_id FROM task_events WHERE kind = 'claimed'"))
    assert set(per_task.values()) == {1} and len(per_task) == 1000


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
    events = Counter(task_id for (task_id,) in pg.execute("SELECT task_id FROM task_events WHERE kind = 'lease_expired'"))
    assert set(events.values()) == {1} and len(events) == len(held)
    assert pg.execute("SELECT state, claimed_by, count(*) FROM tasks GROUP BY 1, 2").fetchall() == [("ready", None, 300)]
