"""What a 60 Hz full-screen TUI costs the server with nobody attached, muxd against tmux.

    .venv/bin/python benchmarks/bench_tui_detached.py [--seconds 5] [--rounds 3] [--backend ghostty|pyte|both]

Issue 29's goal 2, its no-client part: a TUI redraws in place (bench_attach's program, 100x29),
so nothing scrolls into history and nobody is drawn to; what is left is the server's intake
(read, emulate, bookkeeping). A muxd daemon and a tmux 3.3a server run the same program in a
detached session at the same time, so both see the same load; each round measures both
servers' CPU time over the same wall-clock window. Prints each round's share of a core, the
median, and muxd / tmux.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from _report import machine_note, print_table, ratio
from bench_attach import TUI_60HZ, cpu_share

from muxd.emulator.backend import BACKEND_ENV, BACKENDS, backend_name
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

COLUMNS, LINES = 100, 29
START_TIMEOUT_S = 30.0
SETTLE_S = 3.0  # a first stretch left out: the servers' start-up work (muxd's first detections)


class TmuxServer:
    """A private tmux server (`tmux -L NAME`, no config) running `command` in a detached session."""

    def __init__(self, command: str) -> None:
        self.name = f"muxd-bench-tui-{uuid.uuid4().hex[:8]}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", str(COLUMNS), "-y", str(LINES),
                  command)
        self.pid = int(self.tmux("display-message", "-p", "#{pid}").strip())

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.name, *args], env=self.env, capture_output=True, text=True,
                              check=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "bench")

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], env=self.env, capture_output=True)


def start_muxd(script: Path, backend: str) -> MuxdTestServer:
    server = MuxdTestServer(env={BACKEND_ENV: backend}).start()
    server.cli("new-session", "-d", "-s", "bench", "-x", str(COLUMNS), "-y", str(LINES), "--",
               sys.executable, str(script), check=True)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one measuring round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default=None,
                        help="muxd's emulator backend(s) (default: $MUXD_EMULATOR or the code's default)")
    args = parser.parse_args(argv)
    backends = list(BACKENDS) if args.backend == "both" else [backend_name(args.backend)]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "tui60.py"
        script.write_text(TUI_60HZ)
        servers: dict[str, MuxdTestServer] = {}
        tmux = None
        try:
            for backend in backends:
                servers[backend] = start_muxd(script, backend)
            tmux = TmuxServer(f"{sys.executable} {script}")
            for backend, server in servers.items():
                wait_until(lambda: "frame" in server.cli("capture-pane", "-p", "-t", "bench").stdout,
                           timeout=START_TIMEOUT_S, message=f"muxd ({backend}) draws the TUI")
            wait_until(lambda: "frame" in tmux.screen(), timeout=START_TIMEOUT_S, message="tmux draws the TUI")
            names = [f"muxd ({backend})" for backend in servers] + ["tmux"]
            pids = [server.pid for server in servers.values() if server.pid is not None] + [tmux.pid]
            cpu_share(pids, SETTLE_S)
            rounds = [cpu_share(pids, args.seconds) for _ in range(args.rounds)]
        finally:
            if tmux is not None:
                tmux.stop()
            for server in servers.values():
                server.stop()
    print(machine_note())
    print(f"60 Hz full-screen TUI ({COLUMNS}x{LINES}), no client attached, all servers at once; "
          f"{args.rounds} rounds of {args.seconds:g} s; % of a core")
    medians = [statistics.median(shares[i] for shares in rounds) for i in range(len(names))]
    rows = []
    for index, name in enumerate(names):
        per_round = " ".join(f"{shares[index] * 100:.2f}" for shares in rounds)
        rows.append([name, per_round, f"{medians[index] * 100:.2f}", ratio(medians[index], medians[-1])])
    print_table(["server", "per round", "median", "/ tmux"], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
