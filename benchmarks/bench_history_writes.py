"""What the writer thread pays to store one execution (its running row, then its end: two
one-row transactions, as the daemon writes them) in the `executions` table as the schema has it,
against variants of its indexes, triggers and end write, measured in the same run: every
variant is a copy of one seeded database, and each round writes one execution into each in
turn (in reverse order with --reverse), so drift falls on all alike. Thread CPU, median.

    .venv/bin/python benchmarks/bench_history_writes.py [--rows 100000] [--executions 800] [--reverse]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
from _peers import run_benchmark
from bench_history_queries import seed_executions

from muxd.executions.record import FAILED_STATUSES, Execution
from muxd.store.database import transaction
from muxd.store.execution_rows import COLUMNS, UPSERT, to_row
from muxd.store.hosts import use_host

# What an execution's end changes (its running row already holds the rest).
ENDED = ("status", "response", "error_type", "error_message", "stack_hash", "exit_code", "completed_at",
         "duration_ms", "tokens_used", "cost_usd", "cost_source", "cost_model", "cost_price_date", "context_used",
         "context_max", "session_id", "tool_calls", "files_written", "sources", "transcript_bytes",
         "transcript_truncated")
NARROW = f"UPDATE executions SET {', '.join(c + ' = ?' for c in ENDED)} WHERE id = ?"
FAILURE_INDEXES = {"executions_failures": "stack_hash, at, status",
                   "executions_failures_pane": "pane_key, stack_hash, at, status",
                   "executions_failures_principal": "principal, stack_hash, at, status, pane_key"}
# The failure family as comparisons: SQLite codes an IN list of three or more constants as an
# ephemeral table built at each evaluation; a partial index's WHERE is evaluated on every write.
FAILED_OR = "(" + " OR ".join(f"status = '{s}'" for s in FAILED_STATUSES) + ") AND stack_hash IS NOT NULL"

Write = Callable[[sqlite3.Connection, Execution], object]


def upsert(db: sqlite3.Connection, execution: Execution) -> object:
    return db.execute(UPSERT, to_row(execution))


def narrow_update(db: sqlite3.Connection, execution: Execution) -> object:
    row = dict(zip(COLUMNS, to_row(execution)))
    return db.execute(NARROW, [row[c] for c in ENDED] + [execution.id])


def variants(indexes: list[str], triggers: list[str]) -> dict[str, tuple[list[str], Write]]:
    """label -> (statements turning the schema into the variant, the end write)."""
    def drop(keep_indexes: tuple[str, ...] = (), keep_triggers: tuple[str, ...] = ()) -> list[str]:
        return ([f"DROP INDEX {n}" for n in indexes if n not in keep_indexes]
                + [f"DROP TRIGGER {n}" for n in triggers if n not in keep_triggers])

    failures_or = [sql for name, columns in FAILURE_INDEXES.items()
                   for sql in (f"DROP INDEX {name}", f"CREATE INDEX {name} ON executions({columns}) WHERE {FAILED_OR}")]
    return {
        "schema as it is (the peer)": ([], upsert),
        "end written by an UPDATE of its columns": ([], narrow_update),
        "failure indexes' WHERE with OR, not IN": (failures_or, upsert),
        "without the 3 failure indexes": ([f"DROP INDEX {n}" for n in FAILURE_INDEXES], upsert),
        "without pane_at, principal_at": (["DROP INDEX executions_pane_at", "DROP INDEX executions_principal_at"], upsert),
        "without migration 10 (timeline)": ([*(f"DROP TRIGGER executions_spans_{op}" for op in ("insert", "delete", "update")),
                                              "DROP INDEX executions_pane_sums", "DROP INDEX executions_principal_sums"],
                                             upsert),
        "without migration 11 (days, scope counts)": ([f"DROP TRIGGER executions_{tally}_{op}"
                                                       for tally in ("days", "scope_counts")
                                                       for op in ("insert", "delete", "update")], upsert),
        "without the tally triggers": (drop(keep_indexes=tuple(indexes)), upsert),
        "no index, no trigger (floor)": (drop(), upsert),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--executions", type=int, default=800)
    parser.add_argument("--reverse", action="store_true", help="write the variants in reverse order each round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muxd-bench-writes-") as tmp:
        base = Path(tmp) / "base.db"
        seed_executions(base, args.rows)
        with sqlite3.connect(base) as seeded:
            indexes = [n for (n,) in seeded.execute("SELECT name FROM sqlite_master WHERE type = 'index' "
                                                    "AND tbl_name = 'executions' AND sql IS NOT NULL")]
            triggers = [n for (n,) in seeded.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
        runs = []
        for n, (label, (setup, end_write)) in enumerate(variants(indexes, triggers).items()):
            path = Path(tmp) / f"v{n}.db"
            shutil.copy(base, path)
            db = sqlite3.connect(path, isolation_level=None)
            use_host(db, "bench")  # what the store's INSERT names as the writer's host
            for sql in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", *setup):  # as the daemon's writer
                db.execute(sql)
            runs.append((label, db, end_write, []))
        rng, now = random.Random(1), time.time()
        order = runs[::-1] if args.reverse else runs
        for i in range(args.executions):
            running = Execution(id=f"exec_{int(now * 1000) + i}_{rng.getrandbits(32):08x}", pane_id=f"%{i % 20}",
                                pane_key=f"run/%{i % 20}", agent_name=f"agent-{i % 20}", agent_type="claude",
                                status="running", message="think", queued_at=now + i, started_at=now + i)
            ended = msgspec.structs.replace(running, status="success", response="the answer " * 20,
                                            completed_at=now + i + 8, duration_ms=8000, tokens_used=1234,
                                            cost_usd=0.01, cost_source="agent", session_id="s-1", transcript_bytes=5000)
            for _, db, end_write, times in order:
                started = time.thread_time_ns()
                with transaction(db):
                    upsert(db, running)
                with transaction(db):
                    end_write(db, ended)
                times.append((time.thread_time_ns() - started) / 1000)
        for _, db, _, _ in runs:
            db.close()
    peer = statistics.median(runs[0][3])
    print(f"{args.executions} executions, each its running row then its end, {args.rows:,} rows stored; "
          f"writer thread CPU per execution, median")
    for label, _, _, times in runs:
        print(f"  {label:45} {statistics.median(times):6.0f} us  {statistics.median(times) / peer:5.2f}x")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
