"""How long an idle pane's capture-pane takes while a neighbour floods escape-heavy output: muxd vs tmux.

    .venv/bin/python benchmarks/bench_flood_latency.py [--samples 40] [--flood-mb 4]

Each server (private socket, started fresh, stopped in a `finally`) gets an idle pane, then,
one at a time, a pane that `cat`s a flood file in an endless loop. While it floods the
harness captures the idle pane `--samples` times and prints the p50/p95 of those captures,
for no flood and each flood, for muxd and tmux, and the ratio. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from _peers import CLEANUP, MuxdPeer, Peer, TmuxPeer, cpu_seconds, percentile, run_benchmark, running
from _report import machine_note, print_table, ratio

from muxd.testing.floods import FLOODS, looping_cat, write_flood
from muxd.testing.wait import wait_until

DEFAULT_SAMPLES = 40
DEFAULT_FLOOD_MB = 4.0
SAMPLE_INTERVAL_S = 0.05       # between two captures of the idle pane
FLOOD_START_TIMEOUT_S = 60.0   # until the flooding pane's screen shows its output
IDLE_MARKER = "IDLE-PANE-READY"
NO_FLOOD = "none"


@dataclass
class Latency:
    peer: str
    flood: str
    p50_s: float
    p95_s: float
    server_cpu_pct: float  # the server's CPU over the sampling window: shows the flood kept it busy


def sample(peer: Peer, samples: int) -> tuple[float, float, float]:
    """(p50, p95, server CPU %) of capturing the idle pane `samples` times."""
    assert peer.pid is not None
    latencies: list[float] = []
    cpu_before, wall_before = cpu_seconds(peer.pid), time.monotonic()
    for _ in range(samples):
        started = time.perf_counter()
        screen = peer.capture("idle")
        latencies.append(time.perf_counter() - started)
        if IDLE_MARKER not in screen:
            raise RuntimeError(f"the idle pane's capture lost its text: {screen!r}")
        time.sleep(SAMPLE_INTERVAL_S)
    cpu = (cpu_seconds(peer.pid) - cpu_before) / (time.monotonic() - wall_before)
    return percentile(latencies, 0.5), percentile(latencies, 0.95), 100 * cpu


def measure(name: str, make: Callable[[], Peer], floods: dict[str, Path], samples: int) -> list[Latency]:
    results: list[Latency] = []
    with running(make) as peer:
        peer.new_pane("idle", ["sh", "-c", f"echo {IDLE_MARKER}; exec sleep 900"])
        wait_until(lambda: IDLE_MARKER in peer.capture("idle"), timeout=FLOOD_START_TIMEOUT_S,
                   message="the idle pane's text")
        results.append(Latency(name, NO_FLOOD, *sample(peer, samples)))
        print(f"  {name:<5} {NO_FLOOD:<10} p50 {results[-1].p50_s * 1000:8.1f} ms", flush=True)
        for flood, path in floods.items():
            session = flood.replace(" ", "-")
            pid = peer.new_pane(session, looping_cat(path))
            try:
                wait_until(lambda: peer.capture(session).strip(), timeout=FLOOD_START_TIMEOUT_S,
                           message=f"{flood} output on the flooding pane")
                results.append(Latency(name, flood, *sample(peer, samples)))
            finally:
                os.killpg(pid, signal.SIGKILL)
                CLEANUP.pane_pids.discard(pid)
            print(f"  {name:<5} {flood:<10} p50 {results[-1].p50_s * 1000:8.1f} ms", flush=True)
    return results


def report(results: list[Latency], samples: int) -> None:
    tmux = {r.flood: r for r in results if r.peer == "tmux"}
    print()
    print(machine_note())
    print(f"idle pane's capture latency, {samples} samples each; muxd: one client connection, "
          "tmux: `tmux capture-pane -p` (a client process each)")
    headers = ["flood", "muxd p50 ms", "muxd p95 ms", "tmux p50 ms", "tmux p95 ms",
               "p50 ratio", "p95 ratio", "muxd CPU %", "tmux CPU %"]
    rows = []
    for mine in (r for r in results if r.peer == "muxd"):
        theirs = tmux[mine.flood]
        rows.append([mine.flood, f"{mine.p50_s * 1000:.1f}", f"{mine.p95_s * 1000:.1f}",
                     f"{theirs.p50_s * 1000:.1f}", f"{theirs.p95_s * 1000:.1f}",
                     ratio(mine.p50_s, theirs.p50_s), ratio(mine.p95_s, theirs.p95_s),
                     f"{mine.server_cpu_pct:.0f}", f"{theirs.server_cpu_pct:.0f}"])
    print_table(headers, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    parser.add_argument("--flood-mb", type=float, default=DEFAULT_FLOOD_MB, help="size of each flood file")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-bench-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        floods = {name: write_flood(name, workdir, int(args.flood_mb * 2**20)) for name in FLOODS}
        results: list[Latency] = []
        for name, make in (("tmux", lambda: TmuxPeer(workdir, None)), ("muxd", MuxdPeer)):
            results += measure(name, make, floods, args.samples)
        report(results, args.samples)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
