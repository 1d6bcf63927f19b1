"""What a tool that drives tmux pays per command when its `tmux` is muxd's shim: the command
lines Claude Code's agent teams and libtmux send, run through muxd's `tmux` launcher against a
muxd daemon and through real tmux against a private tmux server, in the same run.

    .venv/bin/python benchmarks/bench_tmux_shim.py [--runs 30]

Each command line runs `--runs` times on each side, alternating (both see the same load);
medians count. The ratio is tmux/muxd: 1.0 would mean the shim costs no more than tmux. A tmux
client is a small C program; the shim starts a Python interpreter per call, so most of the gap
is interpreter start-up (bench_cli_start.py measures that alone).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import time
import uuid

from _peers import run_benchmark

import muxd
from muxd.daemon.tmux.shim import launcher_path
from muxd.testing.server import MuxdTestServer

SESSION = "bench"


def command_lines(pane: str) -> list[list[str]]:
    """What a teammate spawner sends, per call (pane: the pane the lines target)."""
    return [
        ["display-message", "-p", "-t", pane, "#{session_name}:#{window_id}.#{pane_id}"],
        ["list-panes", "-t", SESSION, "-F", "#{pane_id} #{pane_width}x#{pane_height}"],
        ["send-keys", "-t", pane, "-l", ""],
        ["capture-pane", "-p", "-t", pane],
        ["has-session", "-t", SESSION],
    ]


def _ms(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)  # as pip does at install
    tmux_name = f"bench-shim-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", tmux_name]
    server = MuxdTestServer().start()
    try:
        subprocess.run([*tmux, "-f", "/dev/null", "new-session", "-d", "-s", SESSION, "-x", "80", "-y", "24",
                        "sleep 600"], check=True)
        tmux_pane = subprocess.run([*tmux, "display-message", "-p", "-t", SESSION, "#{pane_id}"], check=True,
                                   capture_output=True, text=True).stdout.strip()
        muxd_pane = server.cli("new-session", "-d", "-P", "-s", SESSION, "--tmux-shim", "--", "sleep", "600",
                               check=True).stdout.strip()
        shim = [str(launcher_path(server.socket_path)), "-L", server.name]  # as libtmux calls it
        print(f"median ms per call, {args.runs} runs each, alternating; ratio tmux/muxd")
        ratios = []
        for tmux_words, muxd_words in zip(command_lines(tmux_pane), command_lines(muxd_pane)):
            tmux_ms, muxd_ms = [], []
            for _ in range(args.runs):
                tmux_ms.append(_ms([*tmux, *tmux_words], server.env))
                muxd_ms.append(_ms([*shim, *muxd_words], server.env))
            took_tmux, took_muxd = statistics.median(tmux_ms), statistics.median(muxd_ms)
            ratios.append(took_tmux / took_muxd)
            print(f"{' '.join(tmux_words[:1]):18} tmux {took_tmux:6.1f}  muxd tmux {took_muxd:6.1f}  "
                  f"ratio {took_tmux / took_muxd:4.2f}x")
        print(f"geometric mean ratio {statistics.geometric_mean(ratios):4.2f}x")
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, stderr=subprocess.DEVNULL)
        server.stop()
    return 0


if __name__ == "__main__":
    run_benchmark(main)
