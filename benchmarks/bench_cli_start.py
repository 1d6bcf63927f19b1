"""How fast one-shot CLI commands start: `muxd ls` (and a few more) start-to-exit against a bare
`python -c pass` of the same interpreter, measured in the same run (issue 14's target: ≤ 1.5×).

    .venv/bin/python benchmarks/bench_cli_start.py [--runs 30]

A test daemon with one pane answers; each command runs `--runs` times and the median counts.
Besides start-to-exit (wall) time, the CPU time the command itself used (user + system, from
rusage; the daemon's share is not in it) is shown: on a shared machine wall times follow the
load, CPU times much less so.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

from _peers import run_benchmark

from muxd.testing.server import MuxdTestServer

COMMANDS = (["ls"], ["has-session", "-t", "bench"], ["capture-pane", "-p", "-t", "bench"], ["--version"])


def median_ms(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of one run of `argv`."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "-s", "bench", "--", "sleep", "600", check=True)
        bare, bare_cpu = median_ms([sys.executable, "-c", "pass"], server.env, args.runs)
        print(f"python -c pass: {bare:6.1f} ms  (cpu {bare_cpu:5.1f} ms)")
        for command in COMMANDS:
            took, cpu = median_ms([sys.executable, "-m", "muxd", "-L", server.name, *command], server.env, args.runs)
            print(f"muxd {' '.join(command):28} {took:6.1f} ms  ratio {took / bare:4.1f}x  (target <= 1.5x)"
                  f"  cpu {cpu:5.1f} ms  ratio {cpu / bare_cpu:4.1f}x")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    run_benchmark(main)
