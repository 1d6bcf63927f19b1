"""The store a fleet shares (issue 30), PostgreSQL against SQLite in the same run:

(a) the execution history's queries at `--executions` rows (1,000,000 by default): p50/p95 of each
    call the MCP tools make (bench_history_queries.HISTORY_CALLS, the same targets on both), and
    PostgreSQL's p50 and p95 over SQLite's;
(b) claims per second through real daemons: `--tasks` tasks raced for by `--workers` clients on each
    of two daemons sharing PostgreSQL, by the same number of clients on one daemon on PostgreSQL,
    and on one daemon on SQLite (every task with exactly one winner, checked in each run).

    .venv/bin/python benchmarks/bench_fleet_store.py [--executions 1000000] [--calls 100]
        [--tasks 1000] [--workers 20] [--skip-history] [--skip-claims]

PostgreSQL is a private cluster (muxd/testing/postgres.py) with fsync on and synchronous_commit
off: a commit is not waited onto the disk, as SQLite's WAL with synchronous=NORMAL does not.
Its history is a copy of the SQLite file's rows and of the tallies SQLite's triggers kept of them
(COPY), analysed once before the reads.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path

from _peers import run_benchmark
from bench_history_queries import measure_on, sample_targets, seed_executions

from muxd.store.execution_rows import COLUMNS
from muxd.store.pg_connection import connect as pg_connect
from muxd.store.pg_database import PgDatabase
from muxd.store.database import Database
from muxd.testing.claim_race import RaceResult, create_tokens, race_fleet
from muxd.testing.postgres import PostgresCluster
from muxd.testing.server import MuxdTestServer

DEFAULT_EXECUTIONS = 1_000_000
DEFAULT_CALLS = 100
# Durable as SQLite's WAL with synchronous=NORMAL: written, not waited onto the disk at each commit.
PG_SETTINGS = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off", "shared_buffers": "256MB"}
COPY_BATCH_ROWS = 50_000
TALLIES = ("execution_status_counts", "execution_hours", "execution_spans", "failure_counts", "failure_hours",
           "execution_days", "execution_scope_counts")


# ------------------------------------------------------------------ (a) the history's queries

def copy_history(sqlite_path: Path, url: str) -> float:
    """The executions of the SQLite file, and the tallies its triggers kept of them, copied into the
    (migrated) PostgreSQL database at `url`, then analysed; returns the seconds it took."""
    began = time.monotonic()
    PgDatabase(url, host="bench").close()  # the schema, by the daemon's own migrations
    source = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    target = pg_connect(url)
    try:
        # The tallies' triggers are off for the copy: a million upserts of a few rows in one
        # transaction leave each a chain of a million versions to walk. SQLite's tallies are the
        # same numbers (tests/test_pg_store.py holds the two databases' triggers to it).
        # PostgreSQL's tallies have a row per host (its migration 9), SQLite's are the file's: the
        # seeded rows' one host, last of PostgreSQL's columns.
        (host,), = source.execute("SELECT DISTINCT host FROM executions").fetchall()
        target.execute("SET session_replication_role = replica")
        for table, columns in (("executions", ", ".join((*COLUMNS, "host"))), *((t, "*, ?") for t in TALLIES)):
            rows = source.execute(f"SELECT {columns} FROM {table}", () if table == "executions" else (host,))
            into = f"{table} ({columns})" if table == "executions" else table
            with target.raw.cursor() as cursor, cursor.copy(f"COPY {into} FROM STDIN") as copy:
                while batch := rows.fetchmany(COPY_BATCH_ROWS):
                    for row in batch:
                        copy.write_row(row)
        target.execute("SET session_replication_role = origin")
        target.execute("VACUUM ANALYZE")
    finally:
        source.close()
        target.close()
    return time.monotonic() - began


def history(cluster: PostgresCluster, scratch: Path, executions: int, calls: int) -> None:
    sqlite_path = scratch / "history.db"
    took = seed_executions(sqlite_path, executions)
    print(f"seeded {executions:,} executions in SQLite in {took:.1f} s "
          f"({sqlite_path.stat().st_size / 2**20:.0f} MiB)")
    url = cluster.url(cluster.create_database())
    took = copy_history(sqlite_path, url)
    print(f"copied them into PostgreSQL in {took:.1f} s")
    targets = sample_targets(sqlite_path)
    on_sqlite = asyncio.run(measure_on(Database(str(sqlite_path)), targets, calls))
    on_pg = asyncio.run(measure_on(PgDatabase(url, host="bench"), targets, calls))
    print(f"\n(a) {executions:,} executions; p50/p95 ms over {calls} calls each, the same targets on both")
    print(f"{'call':<34} {'SQLite p50':>10} {'p95':>7} {'PG p50':>8} {'p95':>7} {'PG/SQLite p50':>14} {'p95':>6}")
    ratios50, ratios95 = [], []
    for (name, s50, s95, s_rows), (_, p50, p95, p_rows) in zip(on_sqlite, on_pg):
        assert s_rows == p_rows, f"{name}: {s_rows} rows on SQLite, {p_rows} on PostgreSQL"
        ratios50.append(p50 / s50)
        ratios95.append(p95 / s95)
        print(f"{name:<34} {s50:>10.2f} {s95:>7.2f} {p50:>8.2f} {p95:>7.2f} {p50 / s50:>14.2f} {p95 / s95:>6.2f}")
    print(f"{'median of the ratios':<34} {'':>10} {'':>7} {'':>8} {'':>7} {_median(ratios50):>14.2f} "
          f"{_median(ratios95):>6.2f}")


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


# ------------------------------------------------------------------ (b) claims per second

def _race(env_of: list[dict[str, str]], workers: int, tasks: int) -> RaceResult:
    """`tasks` raced for by `workers` clients on each daemon started with the environments `env_of`."""
    servers: list[MuxdTestServer] = []
    try:
        for env in env_of:
            servers.append(MuxdTestServer(env=env).start())
        # Each client's token names its daemon's host: the wins are counted by daemon after.
        daemons = [(server.socket_path, asyncio.run(create_tokens(server.socket_path, [
            f"{env.get('MUXD_HOST', 'sqlite')}-{n}" for n in range(workers)]))) for server, env in zip(servers, env_of)]
        result = asyncio.run(race_fleet(daemons, tasks))
    finally:
        for server in servers:
            server.stop()
    won = [task for tasks_won in result.wins.values() for task in tasks_won]
    assert len(won) == tasks == len(set(won)) and set(won) == set(result.created), "a task lost or claimed twice"
    return result


def claims(cluster: PostgresCluster, tasks: int, workers: int) -> None:
    def pg(host: str, database: str) -> dict[str, str]:
        return {"MUXD_DB": cluster.url(database), "MUXD_HOST": host}

    shared = cluster.create_database()
    runs = [
        (f"two daemons on PostgreSQL, {workers} clients each", [pg("alpha", shared), pg("beta", shared)], workers),
        (f"one daemon on PostgreSQL, {2 * workers} clients", [pg("alpha", cluster.create_database())], 2 * workers),
        (f"one daemon on SQLite, {2 * workers} clients", [{}], 2 * workers),
    ]
    print(f"\n(b) {tasks} tasks, get_next_actionable -> claim_task through the daemons until none is left; "
          "every task had exactly one winner in each run")
    rates = []
    for label, envs, clients in runs:
        result = _race(envs, clients, tasks)
        rates.append(tasks / result.seconds)
        by_daemon = Counter(principal.split("-")[0] for principal in result.wins for _ in result.wins[principal])
        split = ", ".join(f"{n} won through {name.removeprefix('token:')}" for name, n in sorted(by_daemon.items())) \
            if len(envs) > 1 else ""
        print(f"  {label:<44} {result.seconds:6.2f} s {rates[-1]:8.0f} claims/s ({result.lost_races} lost races)"
              f"{'; ' + split if split else ''}")
    print(f"  ratio two PostgreSQL daemons / one SQLite daemon: {rates[0] / rates[2]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executions", type=int, default=DEFAULT_EXECUTIONS)
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=20, help="clients on each of the two daemons")
    parser.add_argument("--skip-history", action="store_true")
    parser.add_argument("--skip-claims", action="store_true")
    args = parser.parse_args()
    with PostgresCluster(settings=PG_SETTINGS) as cluster, \
            tempfile.TemporaryDirectory(prefix="muxd-bench-fleet-") as scratch:
        if not args.skip_history:
            history(cluster, Path(scratch), args.executions, args.calls)
        if not args.skip_claims:
            claims(cluster, args.tasks, args.workers)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
