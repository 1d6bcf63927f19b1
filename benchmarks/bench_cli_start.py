"""How fast one-shot CLI commands start: `muxd ls` (and a few more) start-to-exit against a bare
`python -c pass` of the same interpreter, measured in the same run (issue 14's target: ≤ 1.5×).

    .venv/bin/python benchmarks/bench_cli_start.py [--runs 30]

A test daemon with one pane answers; each command runs `--runs` times, each run right after a
run of the bare interpreter (so both see the same load), and the medians count. Commands run as
a user runs them: the `muxd` console script of the interpreter's environment (`--module` runs
`python -m muxd` instead). muxd's bytecode is compiled first, as pip does at install: the test
environment sets PYTHONDONTWRITEBYTECODE, and a module compiled on every start costs ~1 ms.

The bare interpreter of an editable install (this repository's `pip install -e`) runs the
editable finder at start, which imports pathlib and re; muxd uses both, so against a regular
install's bare interpreter the ratio is higher for the same milliseconds.

Besides start-to-exit (wall) time, the CPU time the command itself used (user + system, from
rusage; the daemon's share is not in it) is shown: on a shared machine wall times follow the
load, CPU times much less so.
"""

from __future__ import annotations

import argparse
import compileall
import os
import sys

from _peers import run_benchmark
from _timing import paired_medians

from muxd.testing.server import MuxdTestServer

COMMANDS = (["ls"], ["has-session", "-t", "bench"], ["capture-pane", "-p", "-t", "bench"], ["--version"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--module", action="store_true", help="run `python -m muxd`, not the console script")
    args = parser.parse_args()
    import muxd

    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)
    script = os.path.join(os.path.dirname(sys.executable), "muxd")
    muxd_argv = [sys.executable, "-m", "muxd"] if args.module or not os.path.exists(script) else [script]
    bare = [sys.executable, "-c", "pass"]
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "-s", "bench", "--", "sleep", "600", check=True)
        print(f"{' '.join(muxd_argv)} against {' '.join(bare)}, {args.runs} runs each, medians")
        for command in COMMANDS:
            took, cpu, bare_wall, bare_cpu = paired_medians([*muxd_argv, "-L", server.name, *command], bare,
                                                            server.env, args.runs)
            print(f"muxd {' '.join(command):28} {took:6.1f} ms  bare {bare_wall:5.1f} ms  ratio {took / bare_wall:4.2f}x"
                  f"  (target <= 1.5x)   cpu {cpu:5.1f} ms  bare {bare_cpu:5.1f} ms  ratio {cpu / bare_cpu:4.2f}x")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    run_benchmark(main)
