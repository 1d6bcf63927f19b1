"""The execution history through the daemon: what the MCP query tools cost at 1,000,000 stored
executions, and what recording costs the daemon on 20 busy agent panes.

    .venv/bin/python benchmarks/bench_history_daemon.py [--rows 1000000] [--calls 100] [--db FILE]
                                                        [--panes 20] [--seconds 60] [--repeats 3]
                                                        [--turn-s 8] [--tree DIR] [--control] [--skip-queries] [--threads]
                                                        [--entry-costs]

1. Queries: a daemon on a database seeded with `--rows` executions (bench_history_queries'
   seed_executions), `muxd mcp` over stdio, the real MCP SDK client; p50/p95 of each query
   tool (target p95 <= 20 ms for each), and of a
   call that reads nothing (list_tools) as the floor, measured in the same run.
2. Recording: `--panes` fake Claude Code panes busy most of the time (turns of `--turn-s` of
   spinner redraws and an answer, the next prompt 2 s after) for `--seconds`, in a daemon
   recording executions and in one with MUXD_HISTORY=0 running side by side in the same window,
   sent the same keystrokes at the same moments; each daemon's CPU seconds (its threads' clocks
   to the nanosecond, /proc/PID/task/*/schedstat: the process's clock ticks are too coarse for a
   difference of a few tens of ms), the ratio on/off, `--repeats` windows, their median (target
   <= 2 %). Also what recording costs per execution recorded (ms of CPU: all of it, the loop's,
   the database writer's; each daemon's threads named through thread_names/sitecustomize.py),
   and the turn length it drove: the same cost per execution is a smaller share at real agents'
   turns, which run for minutes (`--turn-s 120`). `--tree DIR` adds a third daemon recording
   with the code of checkout DIR (old against new in the same window); `--control` a second
   daemon with the history off, whose difference from the first is the figure's noise floor
   (two daemons doing the same work differ by about 1-2 %: the one started last spends ~2 % less
   and the one prompted second in each round ~1-3 % more by that alone, so the daemons are started
   and prompted in turned order, each window one place on). `--threads` prints every thread
   group's CPU (the loop, the writer, readers, session-log finders) and what recording adds on each.
   `--entry-costs` times, inside each daemon, the calls by which its loop enters the history
   (thread_names/entry_costs.py) and prints them per execution: the history's direct cost,
   against what the loop's CPU grew by (_entry_costs.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _entry_costs import EntryCosts, direct_lines
from _peers import cpu_seconds, percentile, run_benchmark, thread_clocks
from bench_history_queries import sample_targets, seed_executions

from muxd.testing.fake_agent_panes import FAKE_AGENT, agent_state
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

UNLIMITED = {"MUXD_MCP_RATE": "100000", "MUXD_MCP_BURST": "100000", "MUXD_MCP_TIER_RATES": "admin=1000000",
             "MUXD_HISTORY_KEEP_DAYS": "3650"}
TARGET_P95_MS = 20.0
TURN_S = 8.0  # each turn: the fake agent's spinner redraws its screen for this long, then answers
PROMPT_GAP_S = 2.0  # and the next prompt comes this long after the turn's length
THREAD_NAMES = Path(__file__).parent / "thread_names"


def spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds each thread group spent from `before` to `after` (thread_clocks); a thread that
    ended between them is not counted (the daemons' threads live as long as they do)."""
    out: dict[str, float] = {}
    for tid, (name, cpu) in after.items():
        out[name] = out.get(name, 0.0) + cpu - (before[tid][1] if tid in before else 0.0)
    return out


def query_calls(t: Any) -> list[tuple[str, str, Any]]:
    """(label, tool, arguments maker) for each measured call, every MCP tool that reads the
    history with its common arguments; the first is the floor."""
    return [
        ("list_tools (floor)", "list_tools", lambda r: {"search": "pane"}),
        ("list_recent_executions", "list_recent_executions", lambda r: {}),
        ("list_recent_executions agent", "list_recent_executions", lambda r: {"agent_name": r.choice(t.agents)}),
        ("list_recent_executions failed", "list_recent_executions", lambda r: {"status": "failed"}),
        ("list_recent_executions trigger 7d", "list_recent_executions",
         lambda r: {"triggered_by": "schedule", "hours": 168}),
        ("tasks_list", "tasks_list", lambda r: {}),
        ("tasks_list failed", "tasks_list", lambda r: {"status": "failed"}),
        ("tasks_list task", "tasks_list", lambda r: {"task_id": r.choice(t.tasks)}),
        ("tasks_list page 50", "tasks_list", lambda r: {"offset": 50 * 20}),
        ("tasks_by_trace", "tasks_by_trace", lambda r: {"trace_id": r.choice(t.traces)}),
        ("tasks_last_failed", "tasks_last_failed", lambda r: {}),
        ("tasks_last_failed unique", "tasks_last_failed", lambda r: {"unique_errors": True}),
        ("tasks_last_failed task", "tasks_last_failed", lambda r: {"task_id": r.choice(t.tasks)}),
        ("get_agent_activity_summary fleet", "get_agent_activity_summary", lambda r: {}),
        ("get_agent_activity_summary fleet 7d", "get_agent_activity_summary", lambda r: {"hours": 168}),
        ("get_agent_activity_summary agent", "get_agent_activity_summary",
         lambda r: {"agent_name": r.choice(t.agents)}),
        ("get_execution_result", "get_execution_result",
         lambda r: (lambda i: {"agent_name": t.owners[i], "execution_id": i})(r.choice(t.ids))),
        ("get_execution_result short id", "get_execution_result",
         lambda r: (lambda i: {"agent_name": t.owners[i], "execution_id": i[-8:]})(r.choice(t.ids))),
        ("list_active_executions", "list_active_executions", lambda r: {}),
    ]


async def _measure(server: MuxdTestServer, targets: Any, calls: int) -> list[tuple[str, float, float]]:
    rng = random.Random(7)
    out = []
    async with mcp_session(server, **UNLIMITED) as session:
        for label, tool, make in query_calls(targets):
            await call_ok(session, tool, **make(rng))  # warm
            times = []
            for _ in range(calls):
                started = time.perf_counter()
                await call_ok(session, tool, **make(rng))
                times.append((time.perf_counter() - started) * 1000)
            out.append((label, percentile(times, 0.5), percentile(times, 0.95)))
    return out


def queries(db: Path, rows: int, calls: int) -> bool:
    if not db.exists():
        print(f"seeding {rows:,} executions into {db} …", flush=True)
        print(f"  seeded in {seed_executions(db, rows):.1f} s", flush=True)
    targets = sample_targets(db)
    server = MuxdTestServer(env={"MUXD_DB": str(db), **UNLIMITED}).start()
    try:
        results = asyncio.run(_measure(server, targets, calls))
    finally:
        server.stop()
    floor = results[0][2]
    print(f"\nMCP query tools over stdio, {rows:,} executions stored, {calls} calls each")
    print(f"{'call':40} {'p50 ms':>8} {'p95 ms':>8} {'p95/floor':>10}")
    ok = True
    for label, p50, p95 in results:
        print(f"{label:40} {p50:8.2f} {p95:8.2f} {p95 / floor:10.2f}")
        if label != results[0][0] and p95 > TARGET_P95_MS:
            ok = False
    print(f"target p95 <= {TARGET_P95_MS:g} ms: {'met' if ok else 'NOT met'}")
    return ok


class _BusyDaemon:
    """One daemon of a recording run: `panes` fake Claude Code panes, Idle and ready for prompts;
    `tree` (a checkout of muxd) runs that code instead of this one's."""

    def __init__(self, label: str, history: bool, panes: int, turn_s: float, tree: Path | None = None,
                 costs: EntryCosts | None = None) -> None:
        env = {"MUXD_HISTORY": "1" if history else "0", "MUXD_FAKE_THINK_S": str(turn_s)}
        if costs is not None:
            env["MUXD_BENCH_ENTRY_COSTS"] = str(costs.folder)
        self.costs = costs
        # The threads named for every daemon alike (the per-thread split); this bench's own path kept.
        path = [str(tree)] if tree is not None else []
        path += [str(THREAD_NAMES), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env["PYTHONPATH"] = os.pathsep.join(path)
        self.label, self.history = label, history
        self.server = MuxdTestServer(env=env).start()
        self.ids = [self.server.cli("new-session", "-d", "-P", "-s", f"a{n}", "--", *FAKE_AGENT, "claude",
                                    check=True).stdout.strip() for n in range(panes)]
        self.cpu = 0.0  # CPU seconds over the window, its threads' clocks
        self.ticks = 0.0  # and as the process's utime + stime count it
        self.by_thread: dict[str, float] = {}

    def wait_idle(self, turn_s: float = 0.0) -> None:
        """Every pane at its prompt (`turn_s`: a turn may still run that long)."""
        for pane in self.ids:
            wait_until(lambda: agent_state(self.server, pane) == "Idle", timeout=60 + turn_s,
                       message=f"{self.label}: {pane} idle")

    def prompt(self, pane: str) -> None:
        self.server.run_here("send-keys", "-t", pane, "think", "Enter")

    def recorded(self, *status: str) -> int:
        """Executions in the history (`status`: only those with it)."""
        if not self.history:
            return 0
        return json.loads(self.server.run_here("history", "--json", "--limit", "1", *status, check=True).stdout)["total"]

    @property
    def pid(self) -> int:
        assert self.server.pid is not None
        return self.server.pid


def _warm_up(daemons: list[_BusyDaemon], turn_s: float) -> None:
    """One turn on every pane before the window: what a daemon does once (imports at the first
    ended turn, the warm-up after the first reply, each agent's session log looked for and given
    up on) is not what recording costs a busy fleet."""
    for daemon in daemons:
        for pane in daemon.ids:
            daemon.prompt(pane)
    for daemon in daemons:
        if daemon.history:
            wait_until(lambda: daemon.recorded() >= len(daemon.ids), timeout=turn_s + 60,
                       message=f"{daemon.label}: the warm-up turns recorded")
    for daemon in daemons:
        daemon.wait_idle(turn_s)  # (the count above has the turns once they run, not once they ended)
    for daemon in daemons:
        if daemon.history:  # their ends (a turn ends its settle time after its prompt came back) before the window
            wait_until(lambda: daemon.recorded("--status", "success") >= len(daemon.ids), timeout=60,
                       message=f"{daemon.label}: the warm-up turns ended")


def _spread(values: list[float]) -> str:
    """` ±S`, S the standard error of the windows' mean (their spread over √n), when there
    are two windows or more: how far a mean of this many windows may sit from the code's own
    figure on this machine."""
    if len(values) < 2:
        return ""
    return f" ±{statistics.stdev(values) / len(values) ** 0.5:.1f}"


def _busy_window(daemons: list[_BusyDaemon], seconds: float, turn_s: float, n: int) -> None:
    """Each daemon's CPU seconds over one window of `seconds` in which all of them run their panes
    at once, sent the same prompts at the same moments (the order turned each round, so none is
    always first): whatever else the machine does falls on all of them alike."""
    stop = threading.Event()

    def prompts() -> None:
        round_number = 0
        while not stop.is_set():
            order = daemons if round_number % 2 == 0 else daemons[::-1]
            for pane in range(len(daemons[0].ids)):
                for daemon in order:
                    daemon.prompt(daemon.ids[pane])
            round_number += 1
            stop.wait(turn_s + PROMPT_GAP_S)

    driver = threading.Thread(target=prompts, daemon=True)
    _mark(daemons, f"start {n}")
    before = [cpu_seconds(d.pid) for d in daemons]
    threads_before = [thread_clocks(d.pid) for d in daemons]
    driver.start()
    time.sleep(seconds)  # the measured window: a fixed wall-clock span, not a synchronisation
    stop.set()
    driver.join()
    for daemon, start, threads in zip(daemons, before, threads_before):
        daemon.by_thread = spent(threads, thread_clocks(daemon.pid))
        daemon.cpu = sum(daemon.by_thread.values())
        daemon.ticks = cpu_seconds(daemon.pid) - start
    _mark(daemons, f"end {n}")


def _mark(daemons: list[_BusyDaemon], label: str) -> None:
    for daemon in daemons:
        if daemon.costs is not None:
            daemon.costs.mark(label)


def _per_execution(daemon: _BusyDaemon, off: _BusyDaemon, recorded: int) -> tuple[float, float, float]:
    """What recording cost `daemon` per execution it recorded over `off` in one window, ms of CPU:
    (all of it, the loop thread's, the database writer's)."""
    def extra(group: str) -> float:
        return (daemon.by_thread.get(group, 0.0) - off.by_thread.get(group, 0.0)) / max(recorded, 1) * 1000
    return (daemon.cpu - off.cpu) / max(recorded, 1) * 1000, extra("loop"), extra("muxd-db")


def _thread_split(daemons: list[_BusyDaemon], recorded: list[int]) -> None:
    """Each daemon's CPU seconds per thread group over the window, and what each recording daemon
    adds on each group over the one with the history off."""
    off = daemons[0]
    names = sorted({n for d in daemons for n in d.by_thread}, key=lambda n: -max(d.by_thread.get(n, 0) for d in daemons))
    for daemon in daemons:
        print(f"    {daemon.label:>6}: " + ", ".join(f"{n} {daemon.by_thread.get(n, 0.0):.2f}" for n in names)
              + f" (threads {daemon.cpu:.3f} s; the process's clock ticks {daemon.ticks:.2f} s)")
    for daemon, count in zip(daemons[1:], recorded):
        extra = daemon.cpu - off.cpu
        print(f"    {daemon.label} - off: " + ", ".join(
            f"{n} {daemon.by_thread.get(n, 0.0) - off.by_thread.get(n, 0.0):+.2f}" for n in names)
            + f" (all threads {extra:+.3f} s; per execution recorded: " + ", ".join(
                f"{n} {(daemon.by_thread.get(n, 0.0) - off.by_thread.get(n, 0.0)) / max(count, 1) * 1000:+.2f} ms"
                for n in names[:2]) + ")", flush=True)


def recording(panes: int, seconds: float, turn_s: float, repeats: int, tree: Path | None,
              threads: bool = False, control: bool = False, entry_costs: Path | None = None) -> bool:
    """`repeats` windows, each with a daemon recording and one with the history off (and, with
    `tree`, a recording daemon running that checkout's code; with `control`, a second daemon with
    the history off, whose difference from the first is the figure's noise floor) running side by
    side: each window's ratio on/off is measured under the same load, and the median of the
    windows is the figure."""
    others = (f", and history on in {tree}" if tree else "") + (", and history off again (control)" if control else "")
    print(f"\n{panes} busy fake Claude Code panes a daemon, turns of {turn_s:g} s every {turn_s + PROMPT_GAP_S:g} s, "
          f"{repeats} window(s) of {seconds:g} s, daemons side by side: history off, history on{others}:")
    extras: dict[str, list[float]] = {}
    per_execution: dict[str, list[tuple[float, float, float]]] = {}
    for n in range(repeats):
        load = os.getloadavg()[0]
        specs: list[tuple[str, bool, Path | None]] = [("off", False, None), ("on", True, None)]
        specs += [(f"on ({tree.name})", True, tree)] if tree is not None else []
        specs += [("control", False, None)] if control else []
        # Started and prompted in turned order, each window one place on: of three daemons doing
        # the same work, by the order alone, the one started last spends ~2 % less and the one
        # prompted second in each round ~1-3 % more; so each takes each place once in as many
        # windows as there are daemons, and the mean is printed too.
        started: dict[str, _BusyDaemon] = {}
        shift = n % len(specs)
        try:
            for label, history, checkout in specs[shift:] + specs[:shift]:
                timed = EntryCosts(entry_costs / f"{n}-{len(started)}") if entry_costs is not None else None
                started[label] = _BusyDaemon(label, history, panes, turn_s, checkout, timed)
            daemons = [started[label] for label, _, _ in specs]
            for daemon in daemons:
                daemon.wait_idle()
            in_turn = list(started.values())
            _warm_up(in_turn, turn_s)
            _busy_window(in_turn, seconds, turn_s, n)
            off = daemons[0].cpu
            parts = [f"off {off:.3f} s"]
            costs = []
            recorded_counts = []
            for daemon in daemons[1:]:
                if not daemon.history:  # the control: how far two daemons doing the same work differ
                    extras.setdefault(daemon.label, []).append((daemon.cpu - off) / off * 100 if off else 0.0)
                    parts.append(f"{daemon.label} {daemon.cpu:.3f} s = {daemon.cpu / off if off else 0:.3f}x")
                    continue
                recorded = daemon.recorded() - panes  # not the warm-up's
                recorded_counts.append(recorded)
                extra = (daemon.cpu - off) / off * 100 if off else 0.0
                extras.setdefault(daemon.label, []).append(extra)
                cost = _per_execution(daemon, daemons[0], recorded)
                per_execution.setdefault(daemon.label, []).append(cost)
                parts.append(f"{daemon.label} {daemon.cpu:.3f} s = {daemon.cpu / off if off else 0:.3f}x "
                             f"({extra:+.1f} %, {recorded} executions)")
                costs.append(f"{daemon.label} {cost[0]:+.2f} ms (loop {cost[1]:+.2f}, writer {cost[2]:+.2f})")
            print(f"  window {n + 1} (load {load:.1f}; started: {', '.join(started)}): daemon CPU " + "; ".join(parts),
                  flush=True)
            print("    per execution recorded: " + "; ".join(costs), flush=True)
            if entry_costs is not None:
                for daemon, count in zip([d for d in daemons[1:] if d.history], recorded_counts):
                    print("\n".join(direct_lines(daemon.label, daemon.costs, daemons[0].costs, f"start {n}", f"end {n}",
                                                  count, per_execution[daemon.label][-1][1])), flush=True)
            if threads:
                _thread_split(daemons, recorded_counts)
        finally:
            for daemon in started.values():
                daemon.server.stop()
    ok = True
    for label, values in extras.items():
        extra = statistics.median(values)
        if label == "control":
            print(f"  noise floor: the control (history off) against off, median of {repeats}: {extra:+.1f} % "
                  f"(mean {statistics.fmean(values):+.1f} %{_spread(values)}) "
                  f"(windows {', '.join(f'{v:+.1f}' for v in values)})")
            continue
        total, loop, writer = (statistics.median(cost[i] for cost in per_execution[label]) for i in range(3))
        print(f"  extra CPU of recording, {label}, median of {repeats}: {extra:+.1f} % "
              f"(mean {statistics.fmean(values):+.1f} %{_spread(values)}; "
              f"ratio {1 + extra / 100:.3f}; target <= 2 %), at turns of {turn_s:g} s; "
              f"per execution recorded {total:+.2f} ms of CPU (loop {loop:+.2f}, writer {writer:+.2f})")
        ok = ok and extra <= 2.0
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--db", type=Path, help="a seeded database to reuse (seeded first if missing)")
    parser.add_argument("--panes", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--turn-s", type=float, default=TURN_S,
                        help="length of each fake agent turn (the next prompt comes 2 s after it)")
    parser.add_argument("--repeats", type=int, default=3, help="recording windows (daemons off and on side by side)")
    parser.add_argument("--tree", type=Path, help="also a recording daemon running this checkout's code "
                                                   "(e.g. a git worktree of the code before a change)")
    parser.add_argument("--skip-queries", action="store_true")
    parser.add_argument("--control", action="store_true",
                        help="also a second daemon with the history off: its difference from the first is the noise floor")
    parser.add_argument("--threads", action="store_true", help="print each thread group's CPU and what recording adds on each")
    parser.add_argument("--entry-costs", action="store_true",
                        help="time the history's calls inside each daemon and print them per execution")
    parser.add_argument("--skip-recording", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muxd-bench-") as tmp:
        db = (args.db or Path(tmp) / "history.db").resolve()
        tree = args.tree.resolve() if args.tree is not None else None
        if tree is not None:
            # Byte-compiled as this checkout is (.ci/run), so that its daemon imports as this one's
            # does: under PYTHONDONTWRITEBYTECODE it would compile each module as it imports it.
            subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", str(tree / "muxd")], check=True)
        # `python -m muxd` puts its working directory first on sys.path, before PYTHONPATH: run
        # from a checkout, a `--tree` daemon would import that checkout's muxd, not the tree's.
        os.chdir(tmp)
        ok = True
        if not args.skip_queries:
            ok = queries(db, args.rows, args.calls) and ok
        if not args.skip_recording:
            ok = recording(args.panes, args.seconds, args.turn_s, args.repeats, tree, args.threads, args.control,
                           Path(tmp) / "entry-costs" if args.entry_costs else None) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    run_benchmark(main)
