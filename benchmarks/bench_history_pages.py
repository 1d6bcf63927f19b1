"""Seed 003's pagination figure: 1,000 stored executions read as 10 pages of 100 through
`tasks_list(limit=100, offset=…)`, by the real MCP SDK client over stdio against a real daemon
(target: under 200 ms for the 10 pages), against peers reading the same rows in the same run.

    .venv/bin/python benchmarks/bench_history_pages.py [--rows 1000] [--page 100] [--runs 30]

Peers, each reading the same pages of the same database file:
- sqlite3: the rows themselves (SELECT … ORDER BY at DESC LIMIT/OFFSET, and the count), in
  this process: the floor no server can beat;
- daemon: the same `list-executions` requests `muxd mcp` makes, over the daemon's own socket
  (msgpack), without MCP: what MCP adds (JSON twice, the SDK's validation of every row against
  the tool's outputSchema on both sides) is the difference.
A run reads all pages; the figure is the median run (p95 beside it), after one warm-up run.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from _peers import percentile, run_benchmark
from _report import fmt, print_table, ratio
from bench_history_queries import seed_executions

from muxd.client.connection import Client
from muxd.protocol.execution_messages import ListExecutions
from muxd.store.execution_rows import SELECT_COLUMNS
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer

TARGET_MS = 200.0  # seed 003: 1,000 executions with pagination in under 200 ms
UNLIMITED = {"MUXD_MCP_RATE": "100000", "MUXD_MCP_BURST": "100000", "MUXD_HISTORY_KEEP_DAYS": "3650"}


def sqlite_runs(db: Path, rows: int, page: int, runs: int) -> list[float]:
    """Milliseconds per run of reading every page (and the count) straight from SQLite."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    sql = f"SELECT {SELECT_COLUMNS} FROM executions ORDER BY at DESC, seq DESC LIMIT ? OFFSET ?"
    times = []
    try:
        for run in range(runs + 1):
            started = time.perf_counter()
            got = 0
            for offset in range(0, rows, page):
                got += len(conn.execute(sql, (page, offset)).fetchall())
                conn.execute("SELECT count(*) FROM executions").fetchone()
            assert got == rows, got
            if run:  # the first run warms the page cache
                times.append((time.perf_counter() - started) * 1000)
    finally:
        conn.close()
    return times


async def daemon_runs(server: MuxdTestServer, rows: int, page: int, runs: int) -> list[float]:
    client = await Client.connect(server.socket_path, client_name="bench")
    times = []
    try:
        for run in range(runs + 1):
            started = time.perf_counter()
            got = 0
            for offset in range(0, rows, page):
                got += len((await client.call(ListExecutions, limit=page, offset=offset)).executions)
            assert got == rows, got
            if run:
                times.append((time.perf_counter() - started) * 1000)
    finally:
        await client.close()
    return times


async def mcp_runs(server: MuxdTestServer, rows: int, page: int, runs: int, *, validate: bool = True,
                   client_cpu: list[float] | None = None) -> list[float]:
    """Milliseconds per run through `muxd mcp`; `validate=False` skips the SDK client's check of
    each result against the tool's outputSchema (a diagnostic: what the typed output costs a
    Python client). `client_cpu` gets this process's CPU milliseconds per run."""
    times = []
    async with mcp_session(server, **UNLIMITED) as session:
        if not validate:
            async def unchecked(name: str, result: object) -> None:
                return None
            session.validate_tool_result = unchecked  # type: ignore[method-assign]
        for run in range(runs + 1):
            cpu = time.process_time()
            started = time.perf_counter()
            got, more = 0, True
            for offset in range(0, rows, page):
                result = await call_ok(session, "tasks_list", limit=page, offset=offset)
                got, more = got + len(result["executions"]), result["has_more"]
            assert got == rows and not more, (got, more)
            if run:
                times.append((time.perf_counter() - started) * 1000)
                if client_cpu is not None:
                    client_cpu.append((time.process_time() - cpu) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--page", type=int, default=100)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muxd-bench-") as tmp:
        db = Path(tmp) / "history.db"
        seed_executions(db, args.rows)
        server = MuxdTestServer(env={"MUXD_DB": str(db), **UNLIMITED}).start()
        try:
            # Alternating peers run by run would be fairer under load; whole series are simpler to
            # read and each takes seconds, so a load change shows as a wide p95.
            client_cpu: list[float] = []
            results = {
                "MCP tasks_list (SDK client, stdio)": asyncio.run(
                    mcp_runs(server, args.rows, args.page, args.runs, client_cpu=client_cpu)),
                "  the same, client not validating": asyncio.run(
                    mcp_runs(server, args.rows, args.page, args.runs, validate=False)),
                "daemon list-executions (socket)": asyncio.run(daemon_runs(server, args.rows, args.page, args.runs)),
                "sqlite3 SELECT (same file)": sqlite_runs(db, args.rows, args.page, args.runs),
            }
        finally:
            server.stop()
    pages = -(-args.rows // args.page)
    medians = {name: statistics.median(times) for name, times in results.items()}
    mcp = next(iter(medians.values()))
    print(f"\n{args.rows:,} executions read as {pages} pages of {args.page}, {args.runs} runs each (median run)")
    print_table(["path", "median", "p95", "per page", "MCP / this"],
                [[name, fmt(medians[name], " ms", 1), fmt(percentile(times, 0.95), " ms", 1),
                  fmt(medians[name] / pages, " ms", 2), ratio(mcp, medians[name])]
                 for name, times in results.items()])
    print(f"the SDK client's own CPU per run (parsing, validating every row against the outputSchema): "
          f"{statistics.median(client_cpu):.1f} ms")
    met = mcp < TARGET_MS
    print(f"\nseed 003 target: {pages} pages through MCP under {TARGET_MS:g} ms: "
          f"{'met' if met else 'NOT met'} ({mcp:.1f} ms)")
    return 0 if met else 1


if __name__ == "__main__":
    run_benchmark(main)
