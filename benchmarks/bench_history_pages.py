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
A run reads all pages; the paths take turns run by run, so each sees the same load; the figure
is the median run (p95 beside it), after one warm-up run each. A diagnostic row repeats the MCP
path with the SDK client's outputSchema check off: what typed outputs cost a Python client.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _peers import percentile, run_benchmark
from _report import fmt, print_table, ratio
from bench_history_queries import seed_executions

from mcp import ClientSession

from muxd.client.connection import Client
from muxd.protocol.execution_messages import ListExecutions
from muxd.store.execution_rows import SELECT_COLUMNS
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer

TARGET_MS = 200.0  # seed 003: 1,000 executions with pagination in under 200 ms
MCP = "MCP tasks_list (SDK client, stdio)"
MCP_UNCHECKED = "  the same, client not checking outputSchema"
UNLIMITED = {"MUXD_MCP_RATE": "100000", "MUXD_MCP_BURST": "100000", "MUXD_HISTORY_KEEP_DAYS": "3650"}


ReadAll = Callable[[], Awaitable[int]]  # reads every page; returns the rows read


def sqlite_reader(conn: sqlite3.Connection, rows: int, page: int) -> ReadAll:
    """Every page (and the count, as the daemon reads it) straight from SQLite, in this process."""
    sql = f"SELECT {SELECT_COLUMNS} FROM executions ORDER BY at DESC, seq DESC LIMIT ? OFFSET ?"

    async def read_all() -> int:
        got = 0
        for offset in range(0, rows, page):
            got += len(conn.execute(sql, (page, offset)).fetchall())
            conn.execute("SELECT count(*) FROM executions").fetchone()
        return got

    return read_all


def daemon_reader(client: Client, rows: int, page: int) -> ReadAll:
    """The requests `muxd mcp` makes for the same pages, over the daemon's own socket."""
    async def read_all() -> int:
        got = 0
        for offset in range(0, rows, page):
            got += len((await client.call(ListExecutions, limit=page, offset=offset)).executions)
        return got

    return read_all


def mcp_reader(session: ClientSession, rows: int, page: int) -> ReadAll:
    async def read_all() -> int:
        got, more = 0, True
        for offset in range(0, rows, page):
            result = await call_ok(session, "tasks_list", limit=page, offset=offset)
            got, more = got + len(result["executions"]), result["has_more"]
        assert not more
        return got

    return read_all


async def unchecked(name: str, result: object) -> None:
    """In place of the SDK client's check of a result against the tool's outputSchema."""


async def measure(server: MuxdTestServer, db: Path, rows: int, page: int, runs: int
                  ) -> tuple[dict[str, list[float]], list[float]]:
    """Milliseconds per run of each path, the paths taking turns run by run (so each sees the
    same load), after one warm-up run each; and this process's CPU ms per validated MCP run."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    client = await Client.connect(server.socket_path, client_name="bench")
    try:
        async with mcp_session(server, **UNLIMITED) as checked, mcp_session(server, **UNLIMITED) as bare:
            bare.validate_tool_result = unchecked  # type: ignore[method-assign]
            paths = {MCP: mcp_reader(checked, rows, page), MCP_UNCHECKED: mcp_reader(bare, rows, page),
                     "daemon list-executions (socket)": daemon_reader(client, rows, page),
                     "sqlite3 SELECT (same file)": sqlite_reader(conn, rows, page)}
            times: dict[str, list[float]] = {name: [] for name in paths}
            client_cpu: list[float] = []
            for run in range(runs + 1):
                for name, read_all in paths.items():
                    cpu, started = time.process_time(), time.perf_counter()
                    got = await read_all()
                    elapsed, cpu = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
                    assert got == rows, (name, got)
                    if run:  # the first run warms caches and connections
                        times[name].append(elapsed)
                        if name == MCP:
                            client_cpu.append(cpu)
            return times, client_cpu
    finally:
        await client.close()
        conn.close()


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
            results, client_cpu = asyncio.run(measure(server, db, args.rows, args.page, args.runs))
        finally:
            server.stop()
    pages = -(-args.rows // args.page)
    medians = {name: statistics.median(times) for name, times in results.items()}
    mcp = medians[MCP]
    print(f"\n{args.rows:,} executions read as {pages} pages of {args.page}, {args.runs} runs each, "
          f"paths taking turns (median run)")
    print_table(["path", "median", "p95", "per page", "MCP / this"],
                [[name, fmt(medians[name], " ms", 1), fmt(percentile(times, 0.95), " ms", 1),
                  fmt(medians[name] / pages, " ms", 2), ratio(mcp, medians[name])]
                 for name, times in results.items()])
    print(f"the SDK client's own CPU per run (parsing, checking every row against the outputSchema): "
          f"{statistics.median(client_cpu):.1f} ms")
    met = mcp < TARGET_MS
    print(f"\nseed 003 target: {pages} pages through MCP under {TARGET_MS:g} ms: "
          f"{'met' if met else 'NOT met'} ({mcp:.1f} ms)")
    return 0 if met else 1


if __name__ == "__main__":
    run_benchmark(main)
