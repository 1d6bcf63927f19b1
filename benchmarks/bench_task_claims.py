"""Claims per second: `--tasks` tasks raced for by `--workers` concurrent clients through the
daemon (each its own connection and token, get_next_actionable → claim until none is left),
against the same race run straight on SQLite in the same run (one thread and connection per
worker, the store's own functions): the peer is the queue without the daemon around it.

    .venv/bin/python benchmarks/bench_task_claims.py [--tasks 1000] [--workers 20]

Both runs check that every task has exactly one winner.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from _peers import run_benchmark

from muxd.errors import TaskAlreadyClaimed
from muxd.store import task_store
from muxd.store.database import Database
from muxd.store.hosts import host_from_env, use_host
from muxd.tasks.model import Verification
from muxd.testing.claim_race import NEXT_BATCH, race
from muxd.testing.mcp_http import create_token
from muxd.testing.server import MuxdTestServer


def through_daemon(tasks: int, workers: int) -> tuple[float, int]:
    server = MuxdTestServer().start()
    try:
        tokens = [create_token(server, "execute_advanced", f"bench-{i}") for i in range(workers)]
        result = asyncio.run(race(server.socket_path, tokens, tasks))
        won = [t for ts in result.wins.values() for t in ts]
        assert len(won) == tasks == len(set(won)), "a task was lost or claimed twice"
        return result.seconds, result.lost_races
    finally:
        server.stop()


def straight_on_sqlite(tasks: int, workers: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "queue.db")
        db = Database(path)
        db.call_sync(lambda c: [task_store.create_task(
            c, title=f"race task {i}", description="", plan="race", priority=i % 7, verification=Verification(),
            depends_on=[], context={}, created_by="system", now=time.time()) for i in range(tasks)])
        db.close()
        wins: list[str] = []
        lost = [0]
        lock = threading.Lock()

        def worker(n: int) -> None:
            c = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            c.execute("PRAGMA journal_mode=WAL")
            use_host(c, host_from_env(os.environ))  # a claim's event says its host, as the daemon's writer does
            shuffle = random.Random(n).shuffle
            while True:
                ready = task_store.next_actionable(c, plan="race", priority_lte=None, limit=NEXT_BATCH,
                                                   now=time.time())
                if not ready:
                    break
                ids = [t.id for t in ready]
                shuffle(ids)
                for task_id in ids:
                    try:
                        _, claimed = task_store.claim(c, task_id, f"worker-{n}", 900, time.time())
                    except TaskAlreadyClaimed:
                        with lock:
                            lost[0] += 1
                        continue
                    if claimed:
                        with lock:
                            wins.append(task_id)
                        break
            c.close()

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - started
        assert len(wins) == tasks and not [t for t, k in Counter(wins).items() if k > 1]
        return seconds, lost[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=20)
    args = parser.parse_args()
    daemon_s, daemon_lost = through_daemon(args.tasks, args.workers)
    raw_s, raw_lost = straight_on_sqlite(args.tasks, args.workers)
    daemon_rate, raw_rate = args.tasks / daemon_s, args.tasks / raw_s
    print(f"{args.tasks} tasks, {args.workers} workers; every task had exactly one winner in both runs")
    print(f"  through the daemon:   {daemon_s:6.2f} s  {daemon_rate:8.0f} claims/s  ({daemon_lost} lost races)")
    print(f"  straight on SQLite:   {raw_s:6.2f} s  {raw_rate:8.0f} claims/s  ({raw_lost} lost races)")
    print(f"  ratio daemon/SQLite:  {daemon_rate / raw_rate:.2f}")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
