"""The history's tallies (schema migrations 8, 10 and 11, store/execution_tallies.py): kept equal
to the rows through inserts, updates and prunes, built from the rows when an older database
upgrades, and giving the same totals (a scoped token's too), stats and failure patterns as the
queries that read the rows."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest

from muxd.executions.record import FAILED_STATUSES, STATUSES, Execution, ExecutionError
from muxd.store import execution_queries as queries
from muxd.store import execution_tallies as tallies
from muxd.store.database import Database
from muxd.store.execution_rows import COLUMNS, SELECT_COLUMNS, from_row, to_row
from muxd.store.execution_store import ExecutionQuery, Scope
from muxd.store.schema import MIGRATIONS
from muxd.store.sqlite_executions import SqliteExecutionStore, stack_hash

HOUR_S = 3600.0
BASE = 1_700_000_000.0  # not on a whole hour: windows start inside one
HOURS = 54  # over three UTC days: windows read day tallies and the hours before them
ERRORS = [("api_error", "overloaded"), ("exit_status", "exit 1"), ("timeout", "slow")]
PRINCIPALS = [None, "token:ci", "agent:%1", "agent:%2"]
# Agents' tokens: their panes plus what they triggered elsewhere; one with no pane; one other host's.
TOKENS = [Scope(pane_keys=frozenset({"run/%1", "run/%2"}), principal="agent:%1"),
          Scope(pane_keys=frozenset({"run/%3"}), principal="agent:%2", sent_as="token:ci"),
          Scope(pane_keys=frozenset(), principal="token:ci"), Scope(pane_keys=frozenset({"run/%0", "run/%9"}))]

# What each tally holds, computed from the rows (as migration 8 builds them).
_HOUR = "coalesce(CAST(at / 3600 AS INTEGER), -1)"
_SPANS = "SELECT 900 AS span UNION ALL SELECT 3600 UNION ALL SELECT 21600 UNION ALL SELECT 86400"
_FAILED = "status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL"
FROM_ROWS = {
    "execution_status_counts": "SELECT status, count(*) FROM executions GROUP BY 1",
    "execution_hours": f"SELECT agent_name, kind, status, {_HOUR}, count(*), total(cost_usd), count(cost_usd), "
                       f"coalesce(sum(tokens_used), 0), coalesce(sum(duration_ms), 0), count(duration_ms) "
                       f"FROM executions GROUP BY 1, 2, 3, 4",
    "execution_spans": f"SELECT span, coalesce(CAST(at / span AS INTEGER), -1), agent_name, kind, count(*), "
                       f"sum(status IN ('failed', 'timeout', 'interrupted')), coalesce(sum(tokens_used), 0), "
                       f"total(cost_usd), count(cost_usd) FROM executions, ({_SPANS}) GROUP BY 1, 2, 3, 4",
    "execution_days": f"SELECT agent_name, kind, status, coalesce(CAST(at / 3600 AS INTEGER) / 24, -1), count(*), "
                      f"total(cost_usd), count(cost_usd), coalesce(sum(tokens_used), 0), "
                      f"coalesce(sum(duration_ms), 0), count(duration_ms) FROM executions GROUP BY 1, 2, 3, 4",
    "execution_scope_counts": "SELECT pane_key, coalesce(principal, ''), status, count(*) FROM executions "
                              "GROUP BY 1, 2, 3",
    "failure_counts": f"SELECT stack_hash, count(*) FROM executions WHERE {_FAILED} GROUP BY 1",
    "failure_hours": f"SELECT stack_hash, {_HOUR}, count(*) FROM executions WHERE {_FAILED} GROUP BY 1, 2",
}


def _executions(count: int, seed: int) -> list[Execution]:
    """`count` executions of 3 agents over HOURS hours, every status, some without cost or duration."""
    rng = random.Random(seed)
    rows = []
    for n in range(count):
        status = rng.choice(STATUSES)
        kind, message = rng.choice(ERRORS)
        error = (ExecutionError(type=kind, message=message, stack_hash=stack_hash(kind, message))
                 if status in FAILED_STATUSES else None)
        at = BASE + rng.uniform(0, HOURS * HOUR_S)
        rows.append(Execution(
            id=f"exec_{n:05d}", pane_id=f"%{n % 4}", pane_key=f"run/%{n % 4}", agent_name=f"agent-{n % 3}",
            kind="command" if n % 5 == 0 else "prompt", agent_type=rng.choice(["claude", "codex", None]),
            status=status, error=error, queued_at=at - 1, started_at=None if status == "pending" else at,
            duration_ms=None if status in ("pending", "running") or n % 6 == 0 else rng.randrange(100, 9000),
            tokens_used=rng.randrange(0, 5000), cost_usd=None if n % 4 == 0 else rng.randrange(1, 999) / 1000,
            principal=rng.choice(PRINCIPALS)))
    return rows


def _changed(e: Execution, rng: random.Random) -> Execution:
    """`e` saved again later: another status (a failure or not), cost, duration, even time."""
    status = rng.choice(STATUSES)
    kind, message = rng.choice(ERRORS)
    return msgspec.structs.replace(
        e, status=status, cost_usd=rng.choice([None, 0.25]), duration_ms=rng.choice([None, 1234]),
        error=ExecutionError(type=kind, message=message, stack_hash=stack_hash(kind, message))
        if status in FAILED_STATUSES else None,
        started_at=(e.started_at or BASE) + rng.choice([0.0, HOUR_S]), agent_name=rng.choice([e.agent_name, "agent-9"]),
        principal=rng.choice([e.principal, *PRINCIPALS]), pane_key=rng.choice([e.pane_key, "run/%9"]))


def _tallies(db: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Each tally as the triggers kept it, next to the same computed from the rows."""
    return {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall()) for table in FROM_ROWS}


def _from_rows(db: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    return {table: sorted(db.execute(sql).fetchall()) for table, sql in FROM_ROWS.items()}


def _same(kept: dict[str, list[tuple[Any, ...]]], computed: dict[str, list[tuple[Any, ...]]]) -> None:
    for table in FROM_ROWS:
        assert len(kept[table]) == len(computed[table]), table  # no row left at zero
        for got, want in zip(kept[table], computed[table]):
            assert got == pytest.approx(want), table  # sums of costs: floats added in another order


QUERIES = [
    ExecutionQuery(), ExecutionQuery(agent_name="agent-1"), ExecutionQuery(status="failed"),
    ExecutionQuery(agent_name="agent-2", statuses=FAILED_STATUSES), ExecutionQuery(agent_name="agent-0", status="running"),
    ExecutionQuery(statuses=FAILED_STATUSES), ExecutionQuery(statuses=("pending", "running")),
    ExecutionQuery(limit=2, offset=1, statuses=FAILED_STATUSES),
    *[ExecutionQuery(since=BASE + h * HOUR_S + offset) for h in (0, 1, 3) for offset in (0.0, 1234.5)],
    ExecutionQuery(since=BASE + 2 * HOUR_S, agent_name="agent-2"),
    ExecutionQuery(since=(BASE // HOUR_S + 2) * HOUR_S),  # on a whole hour: no part-hour at its start
    ExecutionQuery(since=BASE + 99 * HOUR_S),  # after everything
    ExecutionQuery(since=BASE + 30 * HOUR_S + 17.25),  # whole days and the hours before the first
    *[ExecutionQuery(scope=token, **filters) for token in TOKENS
      for filters in ({}, {"statuses": FAILED_STATUSES}, {"status": "success"}, {"limit": 3, "offset": 2},
                      {"statuses": FAILED_STATUSES, "limit": 1, "offset": 1},
                      {"statuses": FAILED_STATUSES, "since": BASE + 20.5 * HOUR_S})],
]


def _patterns_from_rows(db: sqlite3.Connection, q: ExecutionQuery) -> list[tuple[Any, ...]]:
    """execution_queries.error_patterns' rows for a scoped query of failures, worked out in Python
    from every row: the straightforward answer its indexes must give."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for row in db.execute(f"SELECT seq, at, stack_hash, id, task_id, trace_id, error_message, error_type, pane_key, "
                          f"principal FROM executions WHERE {_FAILED}"):
        seen = row[8] in (q.scope.pane_keys or ()) or row[9] in q.scope.principals
        if seen and (q.since is None or (row[1] is not None and row[1] >= q.since)):
            groups.setdefault(row[2], []).append(row)

    def newness(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return (row[1] is not None, row[1] or 0.0, row[0])

    patterns = []
    for h, rows in groups.items():
        newest = max(rows, key=newness)
        known = [row[1] for row in rows if row[1] is not None]
        patterns.append((newness(newest), (h, len(rows), min(known) if known else None, newest[1], *newest[3:8])))
    patterns.sort(key=lambda pattern: pattern[0], reverse=True)
    return [pattern for _, pattern in patterns][q.offset:q.offset + q.limit]


def _check_answers(path: Path) -> None:
    """The tallies' answer to each query it covers is the rows' answer."""
    db = sqlite3.connect(path)
    try:
        answered = scoped = 0
        for q in QUERIES:
            if not q.scope.everything and q.statuses == FAILED_STATUSES:  # a token's failure patterns
                want_patterns = _patterns_from_rows(db, q)
                assert db.execute(*queries.error_patterns(q)).fetchall() == want_patterns and want_patterns, q
                unique = [from_row(row).id for row in db.execute(*queries.unique_failures(q))]
                assert unique == [pattern[4] for pattern in want_patterns], q
            if not q.scope.everything and tallies.count(q) is not None:
                scoped += 1
            if tallies.covers(q):
                want = queries.fold_stats(db.execute(*queries.stats(q)).fetchall())
                got = queries.fold_stats(db.execute(*tallies.stats(q)).fetchall())
                def uncosted(stats: list[Any]) -> list[Any]:
                    return [msgspec.structs.replace(s, total_cost_usd=None) for s in stats]
                assert uncosted(got) == uncosted(want), q
                assert [s.total_cost_usd for s in got] == pytest.approx([s.total_cost_usd for s in want]), q
                answered += 1
            if tallies.covers(q, by_agent=False, failures=True):
                want_patterns = db.execute(*queries.error_patterns(q)).fetchall()
                assert db.execute(*tallies.error_patterns(q)).fetchall() == want_patterns, q
                answered += 1
            total = tallies.count(q)
            if total is not None:
                assert db.execute(*total).fetchone() == db.execute(*queries.count(q)).fetchone(), q
                answered += 1
        assert answered >= 20  # most queries took the tallies' way
        assert scoped == 5 * len(TOKENS)  # a token's totals too (but over a window), from the scope counts
    finally:
        db.close()


def test_triggers_keep_the_tallies_equal_to_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    rows = _executions(600, seed=3)
    rng = random.Random(5)

    async def test() -> None:
        db = Database(str(path))
        store = SqliteExecutionStore(db, prune_batch_rows=50)
        try:
            await store.save_many([(e, None) for e in rows])
            for e in rng.sample(rows, 200):  # saved again: a turn ends, a status or cost changes
                await store.save(_changed(e, rng))
            for e in rng.sample(rows, 50):  # saved again unchanged: no tally moves
                await store.save(e)
            await store.prune(older_than=BASE + 1.5 * HOUR_S, keep_rows=None)
            await store.prune(older_than=None, keep_rows=400)
        finally:
            store.close()
            db.close()

    asyncio.run(test())
    db = sqlite3.connect(path)
    kept, computed = _tallies(db), _from_rows(db)
    assert db.execute("SELECT count(*) FROM executions").fetchone()[0] < 500  # pruned (active rows stay)
    db.close()
    _same(kept, computed)
    _check_answers(path)


@pytest.mark.parametrize("version", [7, 10])  # before any tally; before the day tallies and scope counts
def test_an_older_database_upgrades_with_its_tallies_built(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript("BEGIN; " + "; ".join(MIGRATIONS[:version]) + f"; PRAGMA user_version = {version}; COMMIT;")
    before_hosts = f"INSERT INTO executions ({SELECT_COLUMNS}) VALUES ({', '.join('?' * len(COLUMNS))})"
    old.executemany(before_hosts, [to_row(e) for e in _executions(500, seed=11)])  # rows as muxd wrote them then
    old.close()
    Database(str(path)).close()  # opened by a newer muxd: migrated
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    kept, computed = _tallies(db), _from_rows(db)
    db.close()
    assert sum(n for _, n in kept["execution_status_counts"]) == 500
    _same(kept, computed)
    _check_answers(path)


def test_only_queries_over_everything_by_agent_status_or_time_are_tallied() -> None:
    assert tallies.covers(ExecutionQuery(since=BASE, agent_name="a"))
    assert not tallies.covers(ExecutionQuery(status="success"))  # stats split no status
    assert tallies.covers(ExecutionQuery(statuses=FAILED_STATUSES), failures=True)
    assert not tallies.covers(ExecutionQuery(status="timeout"), failures=True)  # part of the family
    assert not tallies.covers(ExecutionQuery(agent_name="a"), by_agent=False, failures=True)
    for narrowed in [ExecutionQuery(scope=Scope(pane_keys=frozenset({"r/%1"}))), ExecutionQuery(task_id="t"),
                     ExecutionQuery(trace_id="t"), ExecutionQuery(pane_key="r/%1"), ExecutionQuery(triggered_by="mcp"),
                     ExecutionQuery(host="a"),  # SQLite's tallies are the file's, of every host
                     ExecutionQuery(until=BASE)]:
        assert not tallies.covers(narrowed, by_status=True), narrowed
    assert tallies.count(ExecutionQuery(since=BASE)) is None  # a window is counted through its index
    # PostgreSQL's have a row per host (its migration 9): a host's total is its rows'.
    assert tallies.count(ExecutionQuery(host="a")) is None
    assert tallies.count(ExecutionQuery(host="a", status="success"), by_host=True) == (
        "SELECT coalesce(sum(n), 0) FROM execution_status_counts WHERE status IN (?) AND host = ?", ["success", "a"])
    assert tallies.count(ExecutionQuery(scope=Scope(principal="token:ci"), statuses=FAILED_STATUSES)) is not None
