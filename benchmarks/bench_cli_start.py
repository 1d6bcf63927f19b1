"""How fast one-shot CLI commands start: `muxd ls` (and a few more) start-to-exit against a bare
`python -c pass` of the same interpreter, measured in the same run (issue 14's target: ≤ 1.5×).

    .venv/bin/python benchmarks/bench_cli_start.py [--runs 30]

A test daemon with one pane answers; each command runs `--runs` times and the median counts.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from _peers import run_benchmark

from muxd.testing.server import MuxdTestServer

COMMANDS = (["ls"], ["has-session", "-t", "bench"], ["capture-pane", "-p", "-t", "bench"], ["--version"])


def median_ms(argv: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "-s", "bench", "--", "sleep", "600", check=True)
        bare = median_ms([sys.executable, "-c", "pass"], server.env, args.runs)
        print(f"python -c pass: {bare:6.1f} ms")
        for command in COMMANDS:
            took = median_ms([sys.executable, "-m", "muxd", "-L", server.name, *command], server.env, args.runs)
            print(f"muxd {' '.join(command):28} {took:6.1f} ms  ratio {took / bare:4.1f}x  (target <= 1.5x)")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    run_benchmark(main)
