"""What a fleet of daemons writes to one shared PostgreSQL (issue 30), and where it first stops
keeping up: `--hosts` simulated daemons (default 100) of `--agents` panes each (default 50),
each host with its own writer thread and connection running the store's own code
(_fleet_sim.py says what a host writes), every agent taking a turn every `--turn-s` seconds
(default 60), at rising rates (`--steps`, multiples of that rate) until the p95 of a write
transaction passes `--p95-ms` (default 100), the server's CPU is saturated, or the simulation
itself cannot keep up (the turns begin late: the limit found is then this machine's client).

    .venv/bin/python benchmarks/bench_fleet_load.py [--hosts 100] [--agents 50] [--seconds 30]

Per step: turns/s, commits/s, statements/s (pg_stat_statements, the triggers' own counted
apart), the write transactions' p50/p95/p99 on the writer threads, a turn's end-save p95 (queue
and transaction), PostgreSQL's CPU (its processes in /proc), WAL bytes/s, the share of samples
where a backend waited on a lock and on what, and connections. Then the tables' growth per hour,
the statements that took the server's time, and the peer: one SQLite daemon of `--agents` panes
at the base rate through the same write path (no fleet tables), with the fleet/SQLite ratios.

The cluster is private (muxd/testing/postgres.py) and durable by default (fsync, synchronous
commits, full-page writes, as a real server); `--fast` keeps the test suite's settings (commits
not flushed). One machine runs the server and every simulated host: on a small one the client
saturates first, which the lag column shows.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import logging
import os
import tempfile
import threading
import time
import zlib
from pathlib import Path
from collections.abc import Callable
from typing import Any

from _fleet_sim import JOBS, LAG, SAVES, SimHost, seed_tasks, timed
from _peers import cpu_seconds, percentile, run_benchmark
from _report import machine_note

from muxd.executions.transcript import Transcript
from muxd.store.database import Database
from muxd.store.hosts import use_host
from muxd.store.pg_connection import connect
from muxd.store.pg_database import PgDatabase
from muxd.testing.postgres import PostgresCluster

CASTS = Path(__file__).parent / "data" / "agents"
WARMUP_S = 3.0
LOCK_SAMPLE_S = 0.1
DRAIN_TIMEOUT_S = 60.0  # for the writes queued when the window ends
BUSY_SHARE = 0.5          # a turn runs for this share of its period; the agent is idle the rest
TASK_SEED_SPARE = 1.5     # tasks seeded per step: the claims expected times this
DEFAULT_MAX_CONNECTIONS = 100  # PostgreSQL's own default
DAEMON_CONNECTIONS = 5    # writer, 2 readers (HISTORY_READER_THREADS), 2 listeners: counted on a live daemon
CPU_SATURATED = 0.9       # of the machine's cores
LOCKED_SATURATED = 0.5   # of the lock samples with a backend waiting
LAG_SATURATED_MS = 1000.0  # turns beginning this late (p95): the simulation no longer keeps up


def transcript_of(raw_kb: int) -> Transcript:
    """A turn's transcript: the first `raw_kb` KiB the real agents' recordings wrote (all of them
    in turn), compressed as stored."""
    raw = bytearray()
    for cast in sorted(CASTS.glob("*.cast.gz")):
        with gzip.open(cast, "rt", errors="replace") as fh:
            next(fh)  # the cast's header
            for line in fh:
                event = json.loads(line)
                if event[1] == "o":
                    raw += event[2].encode()
    if not raw:
        raise SystemExit(f"no recordings in {CASTS}")
    while len(raw) < raw_kb * 1024:  # only when asked for more than the recordings hold
        raw += raw
    raw = raw[:raw_kb * 1024]
    return Transcript(data=zlib.compress(bytes(raw), 6), raw_bytes=len(raw), extra={"columns": 120, "lines": 40})


# ------------------------------------------------------------------ server readings


def server_pids(cluster: PostgresCluster) -> list[int]:
    """The postmaster and every process it started (backends, WAL writer, checkpointer…)."""
    main = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
    pids = [main]
    for task in os.listdir(f"/proc/{main}/task"):
        with open(f"/proc/{main}/task/{task}/children") as fh:
            pids += [int(p) for p in fh.read().split()]
    return pids


def server_cpu(cluster: PostgresCluster) -> float:
    total = 0.0
    for pid in server_pids(cluster):
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass  # a backend that ended meanwhile
    return total


def server_pss_mb(cluster: PostgresCluster) -> float:
    total = 0
    for pid in server_pids(cluster):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                total += sum(int(line.split()[1]) for line in fh if line.startswith("Pss:"))
        except OSError:
            pass
    return total / 1024


def reading(c: Any) -> dict[str, Any]:
    row = c.execute("SELECT xact_commit, pg_current_wal_lsn()::text, deadlocks FROM pg_stat_database "
                    "WHERE datname = current_database()").fetchone()
    sizes = dict(c.execute("SELECT relname, pg_total_relation_size(relid) FROM pg_stat_user_tables").fetchall())
    rows = dict(c.execute("SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables").fetchall())
    return {"commits": row[0], "lsn": row[1], "deadlocks": row[2], "sizes": sizes, "rows": rows, "at": time.perf_counter()}


def wal_bytes(c: Any, before: str, after: str) -> int:
    return int(c.execute("SELECT pg_wal_lsn_diff(?::pg_lsn, ?::pg_lsn)", (after, before)).fetchone()[0])


class LockSampler:
    """Samples pg_stat_activity on its own connection: how often a backend waits on a lock, on what."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.samples = 0
        self.waiting = 0          # samples with at least one backend waiting on a lock
        self.waits: dict[str, int] = {}
        self.queries = 0          # this sampler's own statements (each a commit to subtract)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> LockSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        c = connect(self.url)
        try:
            while not self._stop.wait(LOCK_SAMPLE_S):
                rows = c.execute("SELECT wait_event, left(query, 60) FROM pg_stat_activity WHERE "
                                 "wait_event_type = 'Lock' AND datname = current_database()").fetchall()
                self.queries += 1
                self.samples += 1
                if rows:
                    self.waiting += 1
                for event, query in rows:
                    key = f"{event}: {query.split(' (')[0]}"
                    self.waits[key] = self.waits.get(key, 0) + 1
        finally:
            c.close()


class LoggedFailures(logging.Handler):
    """Counts the store's failures the simulated daemons log (instead of printing each)."""

    KINDS = ("deadlock detected", "lock timeout")

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        kind = next((k for k in self.KINDS if k in text), "other")
        self.counts[kind] = self.counts.get(kind, 0) + 1


FAILURES = LoggedFailures()


# ------------------------------------------------------------------ one run


async def drive(hosts: list[SimHost], period_s: float, seconds: float,
                at_start: Callable[[], None], at_end: Callable[[], None]) -> tuple[float, float, bool]:
    """Every host's agents for WARMUP_S + `seconds`, `at_start` and `at_end` called at the
    measured window's ends; that window (perf_counter) and whether every write queued was then
    done within DRAIN_TIMEOUT_S (False: the writers are stuck behind the database)."""
    for host in hosts:
        await host.open()
    loop = asyncio.get_running_loop()
    until = loop.time() + WARMUP_S + seconds
    agents = [asyncio.create_task(host.agent(n, period_s, period_s * BUSY_SHARE, until))
              for host in hosts for n in range(len(host.pane_ids))]
    await asyncio.sleep(WARMUP_S)
    window_start = time.perf_counter()
    at_start()
    await asyncio.sleep(max(0.0, until - loop.time()))
    window_end = time.perf_counter()
    at_end()
    for agent in agents:
        agent.cancel()
    await asyncio.gather(*agents, return_exceptions=True)

    async def settle() -> None:
        for host in hosts:
            await host.audit.drain()  # type: ignore[union-attr]
            host.close()
        for host in hosts:  # every write queued is done (and told) while the loop still runs
            await host.db.run(lambda c: None)
    try:
        await asyncio.wait_for(settle(), DRAIN_TIMEOUT_S)
    except asyncio.TimeoutError:
        return window_start, window_end, False
    return window_start, window_end, True


def latencies(start: float, end: float) -> dict[str, float]:
    jobs, saves, lag = JOBS.within(start, end), SAVES.within(start, end), LAG.within(start, end)
    got = {"jobs": len(jobs)}
    for name, values in (("job", jobs), ("save", saves), ("lag", lag)):
        for q in (0.5, 0.95, 0.99):
            got[f"{name}{round(q * 100)}"] = percentile(values, q) if values else float("nan")
    return got


def pg_step(url: str, cluster: PostgresCluster, args: argparse.Namespace, mult: float,
            transcript: Transcript) -> dict[str, Any]:
    """One step at `mult` times the base rate on a fresh set of hosts (the database kept)."""
    period = args.turn_s / mult
    admin = connect(url)
    try:
        expected_claims = args.hosts * args.agents * (args.seconds + WARMUP_S) / period * args.task_share
        if expected_claims:
            admin.execute("SET synchronous_commit = off")  # seeding is not measured
            use_host(admin, "seed")
            seed_tasks(admin, int(expected_claims * TASK_SEED_SPARE) + 10)
        hosts = [SimHost(f"host{h:03d}", timed(PgDatabase)(url, host=f"host{h:03d}"), args.agents, transcript,
                         fleet=True, distinct_names=args.distinct_names, tool_calls=args.tool_calls,
                         audit_rows=args.audit_rows, task_share=args.task_share, fail_share=args.fail_share,
                         seed=h) for h in range(args.hosts)]
        FAILURES.counts.clear()
        sampler = LockSampler(url)
        before: dict[str, Any] = {}
        after: dict[str, Any] = {}

        def at_start() -> None:
            admin.execute("SELECT pg_stat_statements_reset()")
            before.update(reading(admin), cpu=(server_cpu(cluster), time.process_time()))
            sampler.start()

        def at_end() -> None:  # everything read as the window ends: a stuck fleet's drain may never end
            after.update(reading(admin), cpu=(server_cpu(cluster), time.process_time()))
            sampler.stop()
            after["connections"] = admin.execute("SELECT count(*) FROM pg_stat_activity "
                                                 "WHERE backend_type = 'client backend'").fetchone()[0]
            after["pss"] = server_pss_mb(cluster)
            after["statements"] = admin.execute(
                "SELECT coalesce(sum(calls) FILTER (WHERE toplevel), 0)::bigint, coalesce(sum(calls), 0)::bigint "
                "FROM pg_stat_statements").fetchone()
            after["top"] = admin.execute(
                "SELECT toplevel, calls, round(total_exec_time::numeric, 0), left(regexp_replace(query, "
                "'\\s+', ' ', 'g'), 90) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8").fetchall()
            after["wal"] = wal_bytes(admin, before["lsn"], after["lsn"])
            after["failures"] = dict(FAILURES.counts)  # not those of the writes cut off after the window

        start, end, drained = asyncio.run(drive(hosts, period, args.seconds, at_start, at_end))
        if not drained:  # its writers would wait on the locks for ever: the server goes, and they fail
            cluster.stop_server("immediate")
        for host in hosts:
            host.db.close()
        cpu_server, cpu_client = (after["cpu"][i] - before["cpu"][i] for i in (0, 1))
        statements, top, connections, pss = after["statements"], after["top"], after["connections"], after["pss"]
        window = after["at"] - before["at"]
        turns = sum(h.turns_begun for h in hosts)
        return {"mult": mult, "window": window, "turns_s": args.hosts * args.agents / period,
                "commits_s": (after["commits"] - before["commits"] - sampler.queries - 6) / window,
                "statements_s": statements[0] / window, "all_statements_s": statements[1] / window,
                "wal_s": after["wal"] / window, "drained": drained, "failures": after["failures"],
                "deadlocks": after["deadlocks"] - before["deadlocks"],
                "cpu_server": cpu_server / window, "cpu_client": cpu_client / window,
                "locked": sampler.waiting / max(1, sampler.samples), "waits": sampler.waits,
                "connections": connections, "pss_mb": pss, "top": top, "turns": turns,
                "growth": {name: (after["sizes"].get(name, 0) - before["sizes"].get(name, 0)) / window * 3600
                           for name in after["sizes"]},
                "row_moves": {name: (after["rows"].get(name, 0) - before["rows"].get(name, 0)) / window
                              for name in after["rows"]},
                **latencies(start, end)}
    finally:
        admin.close()


def sqlite_peer(args: argparse.Namespace, transcript: Transcript, mult: float) -> dict[str, Any]:
    """One SQLite daemon of `--agents` panes at `mult` times the base rate: the same writes, no fleet tables."""
    period = args.turn_s / mult
    with tempfile.TemporaryDirectory() as tmp:
        db = timed(Database)(str(Path(tmp) / "muxd.db"), host="solo")
        statements = [0]
        db.call_sync(lambda c: c.set_trace_callback(lambda _sql: statements.__setitem__(0, statements[0] + 1)))
        if args.task_share:
            db.call_sync(lambda c: seed_tasks(c, int(args.agents * (args.seconds + WARMUP_S) / period
                                                     * args.task_share * TASK_SEED_SPARE) + 10))
        host = SimHost("solo", db, args.agents, transcript, fleet=False, distinct_names=args.distinct_names,
                       tool_calls=args.tool_calls, audit_rows=args.audit_rows, task_share=args.task_share,
                       fail_share=args.fail_share, seed=0)
        counted: dict[str, Any] = {}

        def io_written() -> int:
            with open("/proc/self/io") as fh:
                return int(next(line for line in fh if line.startswith("wchar")).split()[1])

        def at_start() -> None:
            counted.update(statements=statements[0], io=io_written(), at=time.perf_counter())

        def at_end() -> None:
            window = time.perf_counter() - counted["at"]
            counted.update(statements_s=(statements[0] - counted["statements"]) / window,
                           written_s=(io_written() - counted["io"]) / window)

        start, end, _ = asyncio.run(drive([host], period, args.seconds, at_start, at_end))
        result = {"statements_s": counted["statements_s"], "written_s": counted["written_s"], **latencies(start, end)}
        result["commits_s"] = result["jobs"] / (end - start)
        db.close()
        return result


# ------------------------------------------------------------------ report


def print_step(s: dict[str, Any]) -> None:
    print(f"  x{s['mult']:<4g} {s['turns_s']:7.1f} {s['commits_s']:9.0f} {s['statements_s']:8.0f}/{s['all_statements_s']:<7.0f}"
          f" {s['job50']:6.1f} {s['job95']:7.1f} {s['job99']:7.1f} {s['save95']:8.1f} {s['lag95']:8.0f}"
          f" {s['cpu_server'] * 100:6.0f}% {s['cpu_client'] * 100:6.0f}% {s['wal_s'] / 1024:8.0f}"
          f" {s['locked'] * 100:6.0f}% {s['connections']:5d}")
    if s["failures"] or s["deadlocks"]:
        print(f"        deadlocks (the server's count, each retried once): {s['deadlocks']}; failures logged by the "
              "daemons: " + (", ".join(f"{n} {kind}" for kind, n in sorted(s["failures"].items())) or "none"))


def times(fleet: float, solo: float) -> str:
    """fleet / solo as a ratio, one decimal below 10."""
    ratio = fleet / solo if solo else float("nan")
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def limit_of(s: dict[str, Any], args: argparse.Namespace, cores: int) -> str | None:
    if not s["drained"]:
        return (f"the writes queued when the window ended were not done {DRAIN_TIMEOUT_S:g} s later (backends "
                f"waiting on a lock in {s['locked'] * 100:.0f}% of samples): the fleet is stuck")
    if s["locked"] > LOCKED_SATURATED:
        return (f"lock contention: a backend waited on a lock in {s['locked'] * 100:.0f}% of samples, "
                f"{s['deadlocks']} deadlocks (the turns' lag and the writes' latency follow from it)")
    if s["lag95"] > LAG_SATURATED_MS:
        return f"the simulation's own process (turns begin {s['lag95']:.0f} ms late at p95): this machine's client"
    if s["cpu_server"] + s["cpu_client"] > CPU_SATURATED * cores:
        return (f"the machine's CPU ({(s['cpu_server'] + s['cpu_client']) * 100:.0f}% of {cores} cores: "
                f"server {s['cpu_server'] * 100:.0f}%, simulated hosts {s['cpu_client'] * 100:.0f}%)")
    if s["job95"] > args.p95_ms:
        return f"write transactions' p95 {s['job95']:.0f} ms > {args.p95_ms:g} ms"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--agents", type=int, default=50, help="panes per host, each an agent taking turns")
    parser.add_argument("--turn-s", type=float, default=60.0, help="an agent's turn every this many seconds")
    parser.add_argument("--tool-calls", type=int, default=8, help="per turn: each changes the pane's summary")
    parser.add_argument("--audit-rows", type=int, default=4, help="per turn: the orchestrator's MCP calls")
    parser.add_argument("--task-share", type=float, default=0.5, help="share of turns that claim and complete a task")
    parser.add_argument("--fail-share", type=float, default=0.05, help="share of turns that fail")
    parser.add_argument("--transcript-kb", type=int, default=64, help="raw output of a turn, before compression")
    parser.add_argument("--distinct-names", action="store_true", help="agents named per host (default: by pane id, "
                        "the same on every host, as unnamed panes are)")
    parser.add_argument("--steps", default="1,2,4,8,16", help="multiples of the base rate, in order")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window per step")
    parser.add_argument("--p95-ms", type=float, default=100.0)
    parser.add_argument("--fast", action="store_true", help="the test suite's cluster: commits not flushed")
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    logging.getLogger().addHandler(FAILURES)
    transcript = transcript_of(args.transcript_kb)
    settings = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all",
                "max_connections": str(max(200, args.hosts + 50))}
    if not args.fast:
        settings |= {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
    steps: list[dict[str, Any]] = []
    limit = None
    with PostgresCluster(settings=settings) as cluster:
        url = cluster.url(cluster.create_database())
        PgDatabase(url, host="setup").close()  # migrated once, before the hosts race to
        setup = connect(url)
        setup.execute("CREATE EXTENSION pg_stat_statements")
        setup.close()
        print(f"{args.hosts} hosts x {args.agents} agents, a turn every {args.turn_s:g} s per agent at x1 "
              f"({args.tool_calls} summary changes, {args.audit_rows} audit rows, {args.task_share:g} tasks, "
              f"{args.fail_share:g} failed per turn; transcript {transcript.raw_bytes // 1024} KiB raw, "
              f"{len(transcript.data) // 1024} KiB stored); PostgreSQL {'fast (fsync off)' if args.fast else 'durable'}")
        print(machine_note())
        print("  rate  turns/s commits/s stmts/s(+triggers) job p50  p95     p99  save p95  lag p95  pg CPU client"
              "  WAL KB/s locked conns")
        for mult in (float(m) for m in args.steps.split(",")):
            step = pg_step(url, cluster, args, mult, transcript)
            steps.append(step)
            print_step(step)
            limit = limit_of(step, args, cores)
            if limit:
                break
    base = steps[0]
    print(f"\nAt x{base['mult']:g} ({base['turns_s']:.0f} turns/s): {base['connections']} client connections "
          f"(a daemon opens {DAEMON_CONNECTIONS}: {args.hosts * DAEMON_CONNECTIONS} for {args.hosts} real daemons, "
          f"PostgreSQL's default max_connections {DEFAULT_MAX_CONNECTIONS}); server memory (PSS) {base['pss_mb']:.0f} MB")
    print(f"Table growth per hour at x{base['mult']:g} (MB/h; row changes/s):")
    for name, grown in sorted(base["growth"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {name:28s} {grown / 2**20:9.1f} MB/h  {base['row_moves'].get(name, 0):8.1f} rows/s")
    last = steps[-1]
    print(f"Lock waits at x{last['mult']:g} (samples every {LOCK_SAMPLE_S:g} s):")
    for key, n in sorted(last["waits"].items(), key=lambda kv: -kv[1])[:6]:
        print(f"  {n:6d}  {key}")
    print(f"Server time by statement at x{last['mult']:g} (top-level or inside a trigger, calls, ms):")
    for toplevel, calls, total_ms, query in last["top"]:
        print(f"  {'top ' if toplevel else 'trig'} {calls:8d} {total_ms:9} {query}")
    print(f"First limit: {limit or 'none reached within the steps given'}")
    if not args.no_peer:
        peer = sqlite_peer(args, transcript, base["mult"])
        print(f"\nPeer: one SQLite daemon of {args.agents} agents at x{base['mult']:g}: {peer['commits_s']:.1f} commits/s, "
              f"{peer['statements_s']:.0f} statements/s, {peer['written_s'] / 1024:.0f} KB/s written (WAL and "
              f"checkpoints), job p95 {peer['job95']:.1f} ms")
        print(f"Fleet/SQLite at x{base['mult']:g}: commits {times(base['commits_s'], peer['commits_s'])}, statements "
              f"{times(base['statements_s'], peer['statements_s'])}, bytes {times(base['wal_s'], peer['written_s'])} "
              f"(WAL vs SQLite's writes), for {args.hosts}x the agents")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
