"""The execution history's queries at 1,000,000 rows: p50/p95 of each call the MCP tools make,
at store level (SqliteExecutionStore on a real file, reads on its reader threads).

    .venv/bin/python benchmarks/bench_history_queries.py [--rows 1000000] [--calls 200] [--db FILE]

`seed_executions(path, count)` fills a database fast (one transaction, executemany, indexes
built after the rows) with a realistic mix; `HISTORY_CALLS` lists the calls measured, each as a
store method and its arguments, so a daemon-level mode can replay the same ones. `--db FILE`
reuses a seeded file (seeded first if it does not exist). Target: p95 ≤ 20 ms each. On a fresh
database it then prunes the oldest day while saving, to show how long pruning holds the writer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _peers import percentile, run_benchmark

from muxd.config import HISTORY_PRUNE_BATCH_ROWS
from muxd.executions.record import FAILED_STATUSES, Execution, ExecutionError, Status, TriggeredBy
from muxd.store.database import Database
from muxd.store.execution_rows import COLUMNS, to_row
from muxd.store.execution_store import ExecutionQuery, Scope
from muxd.store.sqlite_executions import SqliteExecutionStore, stack_hash

DEFAULT_ROWS = 1_000_000
DEFAULT_CALLS = 200
TARGET_P95_MS = 20.0
PRUNE_DAYS = 1
PROBE_INTERVAL_S = 0.005
SECONDS_PER_DAY = 86_400
ERROR_MESSAGES = 30
SEED = 41
AGENT_TYPES = ("claude", "codex", "gemini", "aider", "opencode", "shell")
TRIGGERS: tuple[TriggeredBy, ...] = ("mcp", "agent", "schedule", "cli", "manual")
TRIGGER_WEIGHTS = (50.0, 20.0, 15.0, 10.0, 5.0)
# Ended statuses by weight (%), then a few still running or queued at the newest end.
ENDED: tuple[Status, ...] = ("success", "failed", "timeout", "cancelled", "interrupted")
ENDED_WEIGHTS = (90.0, 8.0, 1.0, 0.6, 0.4)
ACTIVE: tuple[Status, ...] = ("running", "pending")
ACTIVE_NEWEST = 40
WORDS = ("fix", "the", "failing", "test", "in", "parser", "add", "retry", "to", "client", "refactor",
         "module", "update", "docs", "for", "api", "handle", "timeout", "when", "server", "is", "slow")
ERRORS = [(kind, f"{kind}: {what} #{n}") for n, (kind, what) in enumerate(
    [("api_error", "upstream returned 529 overloaded"), ("rate_limited", "429 too many requests"),
     ("exit_status", "command exited with status 1"), ("pane_exited", "the pane's program exited"),
     ("timeout", "no answer within the timeout")] * (ERROR_MESSAGES // 5))]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _executions(count: int, agents: int, days: int, now: float, rng: random.Random) -> Iterator[Execution]:
    """`count` executions spread evenly over the last `days`, oldest first."""
    span = days * SECONDS_PER_DAY
    names = [f"agent-{n:02d}" for n in range(agents)]
    trace: tuple[str, int] | None = None
    for n in range(count):
        started = now - span + span * n / count
        agent = rng.randrange(agents)
        status = rng.choices(ENDED, ENDED_WEIGHTS)[0] if n < count - ACTIVE_NEWEST else rng.choice(ACTIVE)
        error = None
        if status in ("failed", "timeout", "interrupted"):
            kind, message = rng.choice(ERRORS)
            error = ExecutionError(type=kind, message=message, stack_hash=stack_hash(kind, message))
        # One execution in five belongs to a trace; a failed attempt is retried by the next one.
        if trace is not None and rng.random() < 0.8:
            trace_id, attempt = trace[0], trace[1] + 1
        elif rng.random() < 0.2:
            trace_id, attempt = f"trace-{n:08x}", 1
        else:
            trace_id, attempt = None, None
        trace = (trace_id, attempt) if trace_id and status != "success" and attempt and attempt < 3 else None
        duration_s = rng.uniform(2, 300) if status not in ("running", "pending") else None
        tokens = rng.randrange(500, 50_000)
        yield Execution(
            id=f"exec_{int(started * 1000)}_{rng.getrandbits(32):08x}", pane_id=f"%{agent}",
            pane_key=f"run{n * 4 // count}/%{agent}", agent_name=names[agent],
            agent_type=AGENT_TYPES[agent % len(AGENT_TYPES)], status=status,
            kind="command" if agent % 7 == 0 else "prompt",
            triggered_by=rng.choices(TRIGGERS, TRIGGER_WEIGHTS)[0],
            principal=rng.choice(("token:ci", f"agent:%{(agent + 1) % agents}", "system")),
            message=_text(rng, 12), response=_text(rng, 50) if status == "success" else None, error=error,
            queued_at=started - rng.uniform(0, 2), started_at=None if status == "pending" else started,
            completed_at=None if duration_s is None else started + duration_s,
            duration_ms=None if duration_s is None else int(duration_s * 1000),
            tokens_used=tokens, cost_usd=round(tokens * 3e-6, 6), context_used=tokens * 2, context_max=200_000,
            session_id=f"sess-{agent}-{n // 500}", tool_calls=[f"Bash({_text(rng, 3)})"] * rng.randrange(4),
            files_written=["src/parser.py"] if rng.random() < 0.3 else [],
            task_id=f"task-{n // 3:07d}" if rng.random() < 0.3 else None,
            trace_id=trace_id, span_id=f"span-{n:08x}" if trace_id else None, attempt=attempt,
            idempotency_key=f"idem-{n:08x}" if rng.random() < 0.05 else None,
            sources={"tokens_used": "screen"})


def seed_executions(path: str | Path, count: int, *, agents: int = 20, days: int = 30,
                    now: float | None = None) -> float:
    """Fill the database at `path` (created and migrated if new) with `count` executions over the
    last `days`; returns the seconds it took. Indexes are dropped and rebuilt around the insert."""
    started = time.monotonic()
    Database(str(path)).close()  # the schema, by the daemon's own migrations
    db = sqlite3.connect(str(path), isolation_level=None)
    try:
        db.execute("PRAGMA synchronous=OFF")
        indexes = [sql for (sql,) in db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions' AND sql IS NOT NULL")]
        db.execute("BEGIN")
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' "
                                  "AND tbl_name = 'executions' AND sql IS NOT NULL").fetchall():
            db.execute(f"DROP INDEX {name}")
        rows = (to_row(e) for e in _executions(count, agents, days, now or time.time(), random.Random(SEED)))
        db.executemany(f"INSERT INTO executions ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                       rows)
        for sql in indexes:
            db.execute(sql)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    # Written without syncs: flush now, or the daemon's first checkpoint pays for the whole file.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.monotonic() - started


# ------------------------------------------------------------------ the calls measured


@dataclass(frozen=True)
class Targets:
    """What the calls ask about, sampled from the seeded rows: varied per call, so no answer is
    merely the one cached from the call before."""

    now: float
    agents: list[str]
    ids: list[str]
    owners: dict[str, str]                         # each of ids: its agent
    traces: list[str]
    pane_keys: list[str]
    keys: list[tuple[str, str, str]]               # (principal, pane_key, idempotency key)
    tasks: list[str]                               # tasks with a failure


@dataclass(frozen=True)
class HistoryCall:
    name: str
    method: str                                    # the ExecutionStore method
    args: Callable[[Targets, random.Random], tuple[Any, ...]]


def _day(t: Targets, **filters: Any) -> ExecutionQuery:
    return ExecutionQuery(since=t.now - SECONDS_PER_DAY, **filters)


def _window(t: Targets, length_s: int, bucket_s: int, **filters: Any) -> ExecutionQuery:
    """The window muxd web's charts ask for: `length_s` ending with the bucket now is in."""
    return ExecutionQuery(since=t.now // bucket_s * bucket_s - length_s + bucket_s, **filters)


def _failures(t: Targets, **filters: Any) -> ExecutionQuery:
    return ExecutionQuery(statuses=FAILED_STATUSES, **filters)


def _token(t: Targets, r: random.Random) -> Scope:
    """An agent's token: its pane and one granted to it, plus what it triggered elsewhere."""
    return Scope(pane_keys=frozenset(r.sample(t.pane_keys, 2)), principal=f"agent:%{r.randrange(20)}")


# Every store call the MCP history tools make (list_recent_executions, tasks_list, tasks_by_trace,
# tasks_last_failed, get_agent_activity_summary, get_execution_result; list_active_executions
# reads the daemon's memory only), named after the tool, with the CLI's and a scoped token's.
HISTORY_CALLS: tuple[HistoryCall, ...] = (
    HistoryCall("tasks_list: newest 20 + total", "list", lambda t, r: (ExecutionQuery(),)),
    HistoryCall("tasks_list: one task", "list", lambda t, r: (ExecutionQuery(task_id=r.choice(t.tasks)),)),
    HistoryCall("tasks_list: failed", "list", lambda t, r: (_failures(t),)),
    HistoryCall("tasks_list: a page far back", "list", lambda t, r: (ExecutionQuery(offset=r.randrange(50_000)),)),
    HistoryCall("list_recent: 24 h", "list", lambda t, r: (_day(t),)),
    HistoryCall("list_recent: 24 h, one agent", "list", lambda t, r: (_day(t, agent_name=r.choice(t.agents)),)),
    HistoryCall("list_recent: 24 h, failed", "list", lambda t, r: (_day(t, statuses=FAILED_STATUSES),)),
    HistoryCall("list_recent: 24 h, by trigger", "list", lambda t, r: (_day(t, triggered_by=r.choice(TRIGGERS)),)),
    HistoryCall("list: one agent, all time", "list", lambda t, r: (ExecutionQuery(agent_name=r.choice(t.agents)),)),
    HistoryCall("list: agent's token", "list", lambda t, r: (ExecutionQuery(scope=_token(t, r)),)),
    HistoryCall("list: total only", "list", lambda t, r: (ExecutionQuery(limit=0),)),
    HistoryCall("list: active", "list", lambda t, r: (ExecutionQuery(statuses=("pending", "running")),)),
    HistoryCall("tasks_by_trace", "list", lambda t, r: (ExecutionQuery(trace_id=r.choice(t.traces), limit=100),)),
    HistoryCall("by_trace (CLI)", "by_trace", lambda t, r: (r.choice(t.traces), Scope())),
    HistoryCall("last_failed: page", "page", lambda t, r: (_failures(t, limit=10),)),
    HistoryCall("last_failed: patterns", "error_patterns", lambda t, r: (_failures(t, limit=10),)),
    HistoryCall("last_failed: unique", "unique_failures", lambda t, r: (_failures(t, limit=10),)),
    HistoryCall("last_failed: one task, page", "page", lambda t, r: (_failures(t, task_id=r.choice(t.tasks)),)),
    HistoryCall("last_failed: one task, patterns", "error_patterns",
                lambda t, r: (_failures(t, task_id=r.choice(t.tasks)),)),
    HistoryCall("last_failed: token, patterns", "error_patterns", lambda t, r: (_failures(t, scope=_token(t, r)),)),
    HistoryCall("patterns 24 h", "error_patterns", lambda t, r: (_day(t, statuses=FAILED_STATUSES),)),
    HistoryCall("summary: fleet stats 24 h", "stats", lambda t, r: (_day(t),)),
    HistoryCall("summary: recent failures", "page", lambda t, r: (_day(t, statuses=FAILED_STATUSES, limit=5),)),
    HistoryCall("summary: one agent stats 24 h", "stats", lambda t, r: (_day(t, agent_name=r.choice(t.agents)),)),
    HistoryCall("summary: fleet stats 7 days", "stats",
                lambda t, r: (ExecutionQuery(since=t.now - 7 * SECONDS_PER_DAY),)),
    # muxd web's charts (execution-timeline), each window the page offers: the fleet's from the
    # timeline's tallies (migration 10), a token's from its two covering indexes.
    HistoryCall("charts: fleet 24 h by hour", "timeline", lambda t, r: (_window(t, SECONDS_PER_DAY, 3600), 3600)),
    HistoryCall("charts: fleet 7 days by 6 h", "timeline",
                lambda t, r: (_window(t, 7 * SECONDS_PER_DAY, 6 * 3600), 6 * 3600)),
    HistoryCall("charts: fleet 30 days by day", "timeline",
                lambda t, r: (_window(t, 30 * SECONDS_PER_DAY, SECONDS_PER_DAY), SECONDS_PER_DAY)),
    HistoryCall("charts: fleet 6 h by 15 min", "timeline", lambda t, r: (_window(t, 6 * 3600, 900), 900)),
    HistoryCall("charts: token 24 h by hour", "timeline",
                lambda t, r: (_window(t, SECONDS_PER_DAY, 3600, scope=_token(t, r)), 3600)),
    HistoryCall("result: id from a short id", "ids_starting", lambda t, r: (r.choice(t.ids)[-8:], 32)),
    HistoryCall("result: get by id", "get", lambda t, r: (r.choice(t.ids),)),
    HistoryCall("result: transcript", "transcript", lambda t, r: (r.choice(t.ids),)),
    HistoryCall("CLI: short ids of a page", "short_ids", lambda t, r: (r.sample(t.ids, 20), [])),
    HistoryCall("send_task: idempotency key", "by_idempotency_key", lambda t, r: r.choice(t.keys)),
)


def sample_targets(path: str | Path, *, sample: int = 500) -> Targets:
    """Ids, traces, agents and panes to ask about, picked from the database at `path`."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        now = db.execute("SELECT max(at) FROM executions").fetchone()[0]
        pick = f"ORDER BY random() LIMIT {sample}"
        owners = dict(db.execute(f"SELECT id, agent_name FROM executions WHERE seq % 97 = 0 {pick}").fetchall())
        return Targets(
            now=now,
            agents=[a for (a,) in db.execute("SELECT DISTINCT agent_name FROM executions")],
            ids=list(owners),
            owners=owners,
            traces=[t for (t,) in db.execute(f"SELECT trace_id FROM executions WHERE seq % 7 = 0 "
                                             f"AND attempt > 1 {pick}")],  # retried: 2-3 attempts
            pane_keys=[k for (k,) in db.execute("SELECT DISTINCT pane_key FROM executions")],
            keys=db.execute(f"SELECT principal, pane_key, idempotency_key FROM executions "
                            f"WHERE idempotency_key IS NOT NULL AND seq % 13 = 0 {pick}").fetchall(),
            tasks=[t for (t,) in db.execute(f"SELECT task_id FROM executions WHERE task_id IS NOT NULL "
                                            f"AND status = 'failed' AND seq % 11 = 0 {pick}")])
    finally:
        db.close()


async def measure(path: str | Path, calls: int) -> list[tuple[str, float, float, int]]:
    """(name, p50 ms, p95 ms, rows in the last answer) of each of HISTORY_CALLS, `calls` times each."""
    return await measure_on(Database(str(path)), sample_targets(path), calls)


async def measure_on(db: Database, targets: Targets, calls: int) -> list[tuple[str, float, float, int]]:
    """`measure` on the opened database `db` (SQLite's or PostgreSQL's; closed after), asking about
    `targets`."""
    rng = random.Random(SEED)
    store = SqliteExecutionStore(db)
    results = []
    try:
        for call in HISTORY_CALLS:
            method = getattr(store, call.method)
            answer = await method(*call.args(targets, rng))  # warm: the first call opens the connection
            times = []
            for _ in range(calls):
                args = call.args(targets, rng)
                began = time.perf_counter()
                answer = await method(*args)
                times.append((time.perf_counter() - began) * 1000)
            size = len(answer[0]) if isinstance(answer, tuple) else len(answer) if isinstance(answer, (list, dict)) \
                else int(answer is not None)
            results.append((call.name, percentile(times, 0.5), percentile(times, 0.95), size))
    finally:
        store.close()
        db.close()
    return results


async def measure_prune(path: str | Path, days: float) -> tuple[int, float, float, float]:
    """Prune the oldest `days` while another task keeps saving: (rows pruned, seconds, p50 and
    max ms a save waited meanwhile). The saves show how long the batches hold the writer."""
    db = Database(str(path))
    store = SqliteExecutionStore(db)
    try:
        oldest = await db.run(lambda c: c.execute("SELECT min(at) FROM executions").fetchone()[0])
        pruning = asyncio.ensure_future(store.prune(older_than=oldest + days * SECONDS_PER_DAY, keep_rows=None))
        began, waits = time.perf_counter(), list[float]()
        while not pruning.done():
            probe = Execution(id=f"exec_probe_{len(waits)}", pane_id="%0", pane_key="probe/%0", agent_name="probe",
                              status="success", started_at=time.time())
            save_began = time.perf_counter()
            await store.save(probe)
            waits.append((time.perf_counter() - save_began) * 1000)
            await asyncio.sleep(PROBE_INTERVAL_S)  # pacing the probes, not waiting for anything
        return await pruning, time.perf_counter() - began, percentile(waits, 0.5), max(waits)
    finally:
        store.close()
        db.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--db", help="a database to reuse (seeded with --rows first if it does not exist)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muxd-bench-history-") as scratch:
        path = Path(args.db) if args.db else Path(scratch) / "history.db"
        if not path.exists():
            took = seed_executions(path, args.rows)
            print(f"seeded {args.rows:,} executions in {took:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)")
        rows = sqlite3.connect(path).execute("SELECT count(*) FROM executions").fetchone()[0]
        fresh = not args.db
        print(f"{rows:,} rows; p50/p95 over {args.calls} calls each; target p95 <= {TARGET_P95_MS:.0f} ms")
        print(f"{'call':<34} {'p50 ms':>8} {'p95 ms':>8} {'rows':>6}")
        results = asyncio.run(measure(path, args.calls))
        for name, p50, p95, size in results:
            print(f"{name:<34} {p50:>8.2f} {p95:>8.2f} {size:>6}{'  OVER' if p95 > TARGET_P95_MS else '  ok'}")
        over = [name for name, _, p95, _ in results if p95 > TARGET_P95_MS]
        missed = len(over)
        print(f"{len(results) - missed} of {len(results)} calls within p95 <= {TARGET_P95_MS:.0f} ms"
              + (f"; over: {', '.join(over)}" if over else ""))
        if fresh:  # a reused --db is left as it was
            removed, took, wait_p50, wait_max = asyncio.run(measure_prune(path, PRUNE_DAYS))
            print(f"prune of the oldest {PRUNE_DAYS} day(s): {removed:,} rows in {took:.2f} s "
                  f"({HISTORY_PRUNE_BATCH_ROWS:,} a transaction); a save meanwhile waited p50 {wait_p50:.1f} ms, "
                  f"max {wait_max:.1f} ms")
    return 1 if missed else 0


if __name__ == "__main__":
    run_benchmark(main)
