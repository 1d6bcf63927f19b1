"""Cold start against tmux in the same run: `new-session -d` with no server running, then
`capture-pane -p` until the new pane answers (issue 29's goal 3: ≤ 150 ms), with the parts of
muxd's figure measured alone.

    .venv/bin/python benchmarks/bench_cold_start.py [--runs 5]

Each run starts tmux (`tmux -L NAME -f /dev/null`) and then muxd, each on a private socket, from
nothing, and kills both servers before the next run; muxd gets a fresh state directory and
database each time (as on a first start: the schema is created). The pane runs `/bin/sh` for both.

The breakdown (medians, each part alone, so they do not add up exactly; imports are less the bare
interpreter's start):
  bare interpreter   `python -c pass`: the floor of every Python process
  client start       `muxd ls` with no server: the CLI's own start and its "no server" answer
  daemon imports     what the daemon imports before it listens (muxd.daemon.main, every command)
  backend import     the default emulator backend, which the daemon imports just after it listens
                     (its warm-up) or at the first pane, whichever comes first
  pyghostty import   `import pyghostty` alone: most of it is cffi parsing libghostty's C declarations
  start-server       `muxd start-server`: client start, daemon spawn, imports, database, listening
  first pane         `muxd new-session -d` against a server that already listens
  capture-pane       one `muxd capture-pane -p` against a running server with its pane
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _peers import run_benchmark
from _timing import run_ms

ANSWER_TIMEOUT_S = 30.0
DAEMON_IMPORTS = "import muxd.daemon.main; from muxd.daemon.commands import load_all; load_all()"
BACKEND_IMPORTS = "import muxd.emulator.ghostty_backend"


def _until_answers(argv: list[str], env: dict[str, str]) -> None:
    """Run `argv` until it exits 0 (the pane answers), at most ANSWER_TIMEOUT_S."""
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{' '.join(argv)} never answered")


def _cold_ms(start: list[str], capture: list[str], stop: list[str], env: dict[str, str]) -> float:
    """Milliseconds from starting `start` with no server to `capture` answering; the server is
    stopped after."""
    started = time.perf_counter()
    try:
        subprocess.run(start, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        _until_answers(capture, env)
        return (time.perf_counter() - started) * 1000
    finally:
        subprocess.run(stop, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


class MuxdCold:
    """A muxd server name with a fresh socket and state directory per start."""

    def __init__(self, muxd: list[str]) -> None:
        self.muxd = muxd
        self.name = f"cold{os.getpid()}"
        self.root = tempfile.mkdtemp(prefix="muxd-cold-")
        self.runs = 0

    def env(self) -> dict[str, str]:
        self.runs += 1
        base = os.path.join(self.root, str(self.runs))
        os.makedirs(base)
        return {**os.environ, "MUXD_SOCKET_DIR": os.path.join(base, "sock"), "XDG_STATE_HOME": base,
                "MUXD_DB": os.path.join(base, "muxd.db"), "MUXD_CONFIG": os.devnull, "SHELL": "/bin/sh"}

    def cli(self, *words: str) -> list[str]:
        return [*self.muxd, "-L", self.name, *words]

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmux_bin = shutil.which("tmux")
    if tmux_bin is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    import muxd

    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)
    script = os.path.join(os.path.dirname(sys.executable), "muxd")
    muxd_argv = [script] if os.path.exists(script) else [sys.executable, "-m", "muxd"]
    muxd_peer = MuxdCold(muxd_argv)
    tmux_name = f"cold-tmux{os.getpid()}"
    tmux = [tmux_bin, "-L", tmux_name, "-f", os.devnull]
    tmux_env = {**os.environ, "SHELL": "/bin/sh"}
    cold: dict[str, list[float]] = {"tmux": [], "muxd": []}
    parts: dict[str, list[float]] = {name: [] for name in (
        "bare interpreter", "client start", "daemon imports", "backend import", "pyghostty import", "start-server", "first pane", "capture-pane")}
    try:
        for _ in range(args.runs):
            cold["tmux"].append(_cold_ms([*tmux, "new-session", "-d", "-s", "cold"],
                                         [*tmux, "capture-pane", "-p", "-t", "cold"], [*tmux, "kill-server"], tmux_env))
            env = muxd_peer.env()
            cold["muxd"].append(_cold_ms(muxd_peer.cli("new-session", "-d", "-s", "cold"),
                                         muxd_peer.cli("capture-pane", "-p", "-t", "cold"),
                                         muxd_peer.cli("kill-server"), env))
            parts["bare interpreter"].append(run_ms([sys.executable, "-c", "pass"], env)[0])
            parts["client start"].append(run_ms(muxd_peer.cli("ls"), env)[0])
            bare = parts["bare interpreter"][-1]
            parts["daemon imports"].append(run_ms([sys.executable, "-P", "-c", DAEMON_IMPORTS], env)[0] - bare)
            parts["backend import"].append(run_ms([sys.executable, "-P", "-c", BACKEND_IMPORTS], env)[0] - bare)
            parts["pyghostty import"].append(run_ms([sys.executable, "-P", "-c", "import pyghostty"], env)[0] - bare)
            env = muxd_peer.env()
            try:
                parts["start-server"].append(run_ms(muxd_peer.cli("start-server"), env)[0])
                parts["first pane"].append(run_ms(muxd_peer.cli("new-session", "-d", "-s", "cold"), env)[0])
                _until_answers(muxd_peer.cli("capture-pane", "-p", "-t", "cold"), env)
                parts["capture-pane"].append(run_ms(muxd_peer.cli("capture-pane", "-p", "-t", "cold"), env)[0])
            finally:
                subprocess.run(muxd_peer.cli("kill-server"), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
    finally:
        muxd_peer.cleanup()
    tmux_ms, muxd_ms = statistics.median(cold["tmux"]), statistics.median(cold["muxd"])
    print(f"cold start, new-session -d to the pane answering capture-pane ({args.runs} runs, medians)")
    print(f"  tmux {tmux_ms:7.1f} ms   muxd {muxd_ms:7.1f} ms   muxd/tmux {muxd_ms / tmux_ms:5.1f}x"
          f"   (target: muxd <= 150 ms)")
    print("muxd's parts, each measured alone:")
    for name, values in parts.items():
        print(f"  {name:18} {_median(values)}")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
