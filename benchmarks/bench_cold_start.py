"""Cold start against tmux in the same run: `new-session -d` with no server running, then
`capture-pane -p` until the new pane answers (issue 29's goal 3: ≤ 150 ms), with the parts of
muxd's figure measured alone; and each server's resident memory (goal 6): tmux's with its one
pane, muxd's before any pane and with its first pane (once the deferred work of its start and of that
pane is done), and what holds their pages (shared libraries, anonymous memory).

    .venv/bin/python benchmarks/bench_cold_start.py [--runs 5] [--backend ghostty|pyte]
        [--daemon-start fork|exec|both]

The client that finds no server forks the daemon (client/daemon_fork.py); `--daemon-start exec`
measures the fresh interpreter it starts where it may not fork ($MUXD_DAEMON_START=exec), and
`both` takes turns in each run, so the two ways are compared under the same load.

Each run starts tmux (`tmux -L NAME -f /dev/null`) and then muxd, each on a private socket, from
nothing, and kills both servers before the next run; muxd gets a fresh state directory and
database each time (as on a first start: the schema is created). The pane runs `/bin/sh` for both.

The breakdown (medians, each part alone, so they do not add up exactly; imports are less the bare
interpreter's start):
  bare interpreter   `python -c pass`: the floor of every Python process
  bare, no site      `python -S -c pass`: the daemon's interpreter when it is not forked
                     (client/autostart.py starts it so)
  runtime imports    asyncio, uvloop and msgspec: what any Python daemon of this design imports
  client start       `muxd ls` with no server: the CLI's own start and its "no server" answer
  daemon imports     what the daemon imports before it listens (muxd.daemon.main, the first
                     requests' command modules; the others come after its first reply)
  backend import     the default emulator backend, imported at the first pane (or by the warm-up
                     after the first reply)
  ffi load           libghostty's C declarations, pre-parsed (emulator/ghostty_ffi.py's cache)
  pyghostty parse    `import pyghostty` alone: cffi parsing those declarations, as it did at every
                     start before the cache (and still does where the cache cannot be used)
  start-server       `muxd start-server`: client start, daemon fork, imports, database, listening
  first pane         `muxd new-session -d` against a server that already listens
  capture-pane       one `muxd capture-pane -p` against a running server with its pane
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _peers import cpu_seconds, run_benchmark
from _timing import run_ms

from muxd.client.daemon_fork import DAEMON_START_ENV, DAEMON_START_WAYS
from muxd.daemon.server import SETTLE_IN_IDLE_S
from muxd.emulator.backend import BACKEND_ENV, BACKENDS, backend_name
from muxd.testing.proc import rss_by_mapping, rss_kib

ANSWER_TIMEOUT_S = 30.0
DAEMON_IMPORTS = "import muxd.daemon.main, muxd.daemon.server; from muxd.daemon.commands import CommandTable; CommandTable()"
BACKEND_IMPORTS = "import muxd.emulator.ghostty_backend"
FFI_LOAD = "import muxd.emulator.ghostty_ffi"
RUNTIME_IMPORTS = "import asyncio, uvloop, msgspec"
# The daemon's start puts work off until its first reply, or SETTLE_IN_IDLE_S when none comes, and
# what only a pane uses until its first pane: its memory "before any pane" and "with one pane" is
# read after that, as a daemon left running would hold it. Read at the cold start's answer, that
# work not yet done, a daemon with its pane held ~8 MiB less (benchmarks/README.md).
SETTLED_S = SETTLE_IN_IDLE_S + 1.0
# The parts of the base shown: those of at least this many MiB in either reading.
PART_SHOWN_MIB = 0.4
STARTED = {"fork": "forked", "exec": "exec'ed"}


def _until_answers(argv: list[str], env: dict[str, str]) -> None:
    """Run `argv` until it exits 0 (the pane answers), at most ANSWER_TIMEOUT_S."""
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{' '.join(argv)} never answered")


def _cold_ms(start: list[str], capture: list[str], stop: list[str], env: dict[str, str],
             server_pid: Callable[[], int]) -> tuple[float, float, float]:
    """Milliseconds from starting `start` with no server to `capture` answering, the CPU
    milliseconds every process spent on it (the clients and the server: a figure the machine's
    other load moves less than the wall time), and the server's RSS in MiB then (its one pane
    running); the server is stopped after."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        subprocess.run(start, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        _until_answers(capture, env)
        elapsed = (time.perf_counter() - started) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        clients_s = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        pid = server_pid()
        return elapsed, (clients_s + cpu_seconds(pid)) * 1000, rss_kib(pid) / 1024
    finally:
        subprocess.run(stop, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


class MuxdCold:
    """A muxd server name with a fresh socket and state directory per start."""

    def __init__(self, muxd: list[str]) -> None:
        self.muxd = muxd
        self.name = f"cold{os.getpid()}"
        self.root = tempfile.mkdtemp(prefix="muxd-cold-")
        self.runs = 0

    def env(self, way: str = "fork") -> dict[str, str]:
        self.runs += 1
        base = os.path.join(self.root, str(self.runs))
        os.makedirs(base)
        return {**os.environ, "MUXD_SOCKET_DIR": os.path.join(base, "sock"), "XDG_STATE_HOME": base,
                "MUXD_DB": os.path.join(base, "muxd.db"), "MUXD_CONFIG": os.devnull, "SHELL": "/bin/sh", DAEMON_START_ENV: way}

    def cli(self, *words: str) -> list[str]:
        return [*self.muxd, "-L", self.name, *words]

    def pid(self, env: dict[str, str]) -> int:
        """The running server's pid, from its lock file."""
        return int(Path(env["MUXD_SOCKET_DIR"], f"{self.name}.lock").read_text().strip())

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _print_parts(by_mapping: dict[str, dict[str, int]]) -> None:
    """The last run's daemon's resident MiB by what holds them, before any pane and with one."""
    readings = list(by_mapping)
    shown = [group for group in dict.fromkeys(g for reading in by_mapping.values() for g in reading)
             if any(reading.get(group, 0) >= PART_SHOWN_MIB * 1024 for reading in by_mapping.values())]
    print(f"muxd's resident memory by what holds it (MiB, last run; {' / '.join(readings)}):")
    for group in [*shown, "the rest", "all"]:
        values = []
        for reading in by_mapping.values():
            rest = sum(kib for name, kib in reading.items() if name not in shown)
            values.append({"the rest": rest, "all": sum(reading.values())}.get(group, reading.get(group, 0)))
        print(f"  {group:40} " + " / ".join(f"{kib / 1024:5.1f}" for kib in values))


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", choices=BACKENDS, default=None,
                        help="muxd's emulator backend (default: $MUXD_EMULATOR or the code's default)")
    parser.add_argument("--daemon-start", choices=(*DAEMON_START_WAYS, "both"), default="fork",
                        help="how the client starts the daemon: forked (the default), a fresh interpreter, "
                             "or each in turn (the parts and memory are measured forked)")
    args = parser.parse_args()
    ways = list(DAEMON_START_WAYS) if args.daemon_start == "both" else [args.daemon_start]
    backend = os.environ[BACKEND_ENV] = backend_name(args.backend)  # every muxd started below inherits it
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
    cold: dict[str, list[float]] = {"tmux": [], **{way: [] for way in ways}}
    cpu: dict[str, list[float]] = {"tmux": [], **{way: [] for way in ways}}
    rss: dict[str, list[float]] = {"tmux, one pane": [], "muxd, before any pane": [], "muxd, one pane": [],
                                   "muxd, one pane at its answer": []}
    by_mapping: dict[str, dict[str, int]] = {}  # the last run's daemon's resident KiB by what holds them
    parts: dict[str, list[float]] = {name: [] for name in (
        "bare interpreter", "bare, no site", "runtime imports", "client start", "daemon imports", "backend import", "ffi load",
        "pyghostty parse", "start-server", "first pane", "capture-pane")}
    load_before = os.getloadavg()
    try:
        for _ in range(args.runs):
            def tmux_pid() -> int:
                return int(subprocess.run([*tmux, "display", "-p", "-t", "cold", "#{pid}"], env=tmux_env,
                                          capture_output=True, text=True, check=True).stdout)

            wall, cpu_ms, mib = _cold_ms([*tmux, "new-session", "-d", "-s", "cold"],
                                         [*tmux, "capture-pane", "-p", "-t", "cold"], [*tmux, "kill-server"], tmux_env,
                                         tmux_pid)
            cold["tmux"].append(wall)
            cpu["tmux"].append(cpu_ms)
            rss["tmux, one pane"].append(mib)
            for way in ways:
                env = muxd_peer.env(way)
                wall, cpu_ms, mib = _cold_ms(muxd_peer.cli("new-session", "-d", "-s", "cold"),
                                             muxd_peer.cli("capture-pane", "-p", "-t", "cold"),
                                             muxd_peer.cli("kill-server"), env, lambda: muxd_peer.pid(env))
                cold[way].append(wall)
                cpu[way].append(cpu_ms)
                if way == ways[0]:  # the way the parts and the settled figures are measured
                    rss["muxd, one pane at its answer"].append(mib)
            parts["bare interpreter"].append(run_ms([sys.executable, "-c", "pass"], env)[0])
            parts["bare, no site"].append(run_ms([sys.executable, "-S", "-c", "pass"], env)[0])
            parts["client start"].append(run_ms(muxd_peer.cli("ls"), env)[0])
            bare = parts["bare interpreter"][-1]
            for name, code in (("runtime imports", RUNTIME_IMPORTS), ("daemon imports", DAEMON_IMPORTS),
                               ("backend import", BACKEND_IMPORTS), ("ffi load", FFI_LOAD),
                               ("pyghostty parse", "import pyghostty")):
                parts[name].append(run_ms([sys.executable, "-P", "-c", code], env)[0] - bare)
            env = muxd_peer.env(ways[0])
            try:
                parts["start-server"].append(run_ms(muxd_peer.cli("start-server"), env)[0])
                time.sleep(SETTLED_S)  # not a wait for a condition: the memory of a daemon left alone
                rss["muxd, before any pane"].append(rss_kib(muxd_peer.pid(env)) / 1024)
                by_mapping["before any pane"] = rss_by_mapping(muxd_peer.pid(env))
                parts["first pane"].append(run_ms(muxd_peer.cli("new-session", "-d", "-s", "cold"), env)[0])
                _until_answers(muxd_peer.cli("capture-pane", "-p", "-t", "cold"), env)
                parts["capture-pane"].append(run_ms(muxd_peer.cli("capture-pane", "-p", "-t", "cold"), env)[0])
                time.sleep(SETTLED_S)  # as above: the first pane's own deferred work done
                rss["muxd, one pane"].append(rss_kib(muxd_peer.pid(env)) / 1024)
                by_mapping["one pane"] = rss_by_mapping(muxd_peer.pid(env))
            finally:
                subprocess.run(muxd_peer.cli("kill-server"), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
    finally:
        muxd_peer.cleanup()
    tmux_ms, tmux_cpu = statistics.median(cold["tmux"]), statistics.median(cpu["tmux"])
    load_after = os.getloadavg()
    print(f"cold start, new-session -d to the pane answering capture-pane ({args.runs} runs, medians; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after, {os.cpu_count()} CPUs)")
    for way in ways:
        muxd_ms, spread = statistics.median(cold[way]), f"{min(cold[way]):.0f}-{max(cold[way]):.0f}"
        print(f"  tmux {tmux_ms:7.1f} ms   muxd ({backend}, daemon {STARTED[way]}) {muxd_ms:7.1f} ms (runs {spread})"
              f"   muxd/tmux {muxd_ms / tmux_ms:5.1f}x   (target: muxd <= 150 ms)")
    for way in ways:
        muxd_cpu = statistics.median(cpu[way])
        print(f"  CPU of every process of it: tmux {tmux_cpu:7.1f} ms   muxd (daemon {STARTED[way]}) {muxd_cpu:7.1f} ms   "
              f"muxd/tmux {muxd_cpu / max(tmux_cpu, 1.0):5.1f}x   (clock ticks of {1000 / os.sysconf('SC_CLK_TCK'):.0f} ms "
              f"for the servers)")
    tmux_mib, muxd_mib = statistics.median(rss["tmux, one pane"]), statistics.median(rss["muxd, before any pane"])
    print(f"server RSS (MiB, medians): tmux with one pane {tmux_mib:5.1f}   muxd before any pane {muxd_mib:5.1f}"
          f"   muxd with one pane {statistics.median(rss['muxd, one pane']):5.1f}   muxd/tmux {muxd_mib / tmux_mib:4.1f}x"
          f"   (muxd at the cold start's answer, its deferred work not done: "
          f"{statistics.median(rss['muxd, one pane at its answer']):5.1f})")
    _print_parts(by_mapping)
    print("muxd's parts, each measured alone:")
    for name, values in parts.items():
        print(f"  {name:18} {_median(values)}")
    bare, runtime = statistics.median(parts["bare interpreter"]), statistics.median(parts["runtime imports"])
    no_site = statistics.median(parts["bare, no site"])
    for way in ways:
        if way == "fork":  # the daemon is the first client's own process: no interpreter of its own
            print(f"floor, daemon forked: 2 interpreter starts (new-session's client and capture-pane's client, "
                  f"with site) and the daemon's runtime imports = {2 * bare + runtime:.1f} ms")
        else:
            print(f"floor, daemon exec'ed: 3 interpreter starts (new-session's client and capture-pane's client with "
                  f"site, the daemon without) and the daemon's runtime imports = {2 * bare + no_site + runtime:.1f} ms")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
