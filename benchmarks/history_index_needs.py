"""Which indexes of the `executions` table the history's MCP query tools read: a daemon on a
seeded database runs every call of bench_history_daemon's query_calls with its SQL traced
(sql_trace/sitecustomize.py); each distinct SELECT is put through EXPLAIN QUERY PLAN, and each
index is listed with the statements whose plan reads it, then those no plan reads (each of
which every write still pays for).

    .venv/bin/python benchmarks/history_index_needs.py [--rows 100000] [--db FILE]

The database is never ANALYZEd by the daemon, so the planner's choices do not depend on how
many rows are stored: a small seed shows the plans of a large one.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sqlite3
import tempfile
from collections import defaultdict
from pathlib import Path

from _peers import run_benchmark
from bench_history_daemon import UNLIMITED, _measure
from bench_history_queries import sample_targets, seed_executions

from muxd.store.hosts import use_host
from muxd.testing.server import MuxdTestServer

TRACE_DIR = Path(__file__).parent / "sql_trace"
_LITERAL = re.compile(r"'[^']*'|\b\d+(?:\.\d+)?\b")
_INDEX = re.compile(r"USING (?:COVERING )?INDEX (\w+)")


def _where(sql: str) -> str:
    """A statement's part from its first FROM, short: what it reads and how it filters."""
    return sql[sql.find(" FROM "):][:100]


def traced_statements(db: Path, trace: Path) -> list[str]:
    """The distinct statements (by shape: literals aside) reading executions that the query tools ran."""
    server = MuxdTestServer(env={"MUXD_DB": str(db), **UNLIMITED, "PYTHONPATH": str(TRACE_DIR),
                                 "MUXD_SQL_TRACE": str(trace)}).start()
    try:
        asyncio.run(_measure(server, sample_targets(db), 2))
    finally:
        server.stop()
    shapes: dict[str, str] = {}
    for line in trace.read_text().splitlines():
        upper = line.lstrip().upper()
        if upper.startswith(("SELECT", "WITH")) and "EXECUTIONS" in upper:
            shapes.setdefault(_LITERAL.sub("?", line), line)
    return list(shapes.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--db", type=Path, help="a seeded database to reuse (seeded first if missing)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muxd-index-needs-") as tmp:
        db = args.db or Path(tmp) / "history.db"
        if not db.exists():
            seed_executions(db, args.rows)
        statements = traced_statements(db, Path(tmp) / "trace.sql")
        reader = sqlite3.connect(db)
        use_host(reader, "local")  # what the daemon's connections answer (store/hosts.py)
        indexes = [name for (name,) in reader.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions' ORDER BY name")]
        used: dict[str, list[str]] = defaultdict(list)
        for sql in statements:
            plan = [row[3] for row in reader.execute("EXPLAIN QUERY PLAN " + sql)]
            for name in {m.group(1) for step in plan for m in _INDEX.finditer(step)}:
                used[name].append(sql)
        reader.close()
    print(f"{len(statements)} distinct statements reading executions, from every call of the query tools")
    for name in indexes:
        print(f"{name:40} read by {len(used.get(name, [])):2} statement(s)"
              + (f", e.g. …{_where(used[name][0])}" if name in used else ": by none of them"))
    return 0


if __name__ == "__main__":
    run_benchmark(main)
