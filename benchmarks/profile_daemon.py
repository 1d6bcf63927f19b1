"""Where muxd's daemon spends its CPU on one corpus: the daemon run under cProfile, as bench_daemon runs it.

    .venv/bin/python benchmarks/profile_daemon.py [--backend ghostty] [--corpus real-aider] [--mb 10] [--top 20]

One private daemon (own socket dir, MUXD_EMULATOR=--backend) is started in the foreground under
cProfile, timing the main thread's CPU (not wall time: idle waits in the event loop would count),
and fed the corpus exactly as bench_daemon.run_multiplexer feeds it (gated
`cat` into one pane, captures until the screen settles, kill-server); the profiler is on from the
pane's start to the settled screen, bench_daemon's measuring window; a second daemon gets a
corpus of the marker line alone, the baseline. Printed: both runs' server CPU (what cProfile's
overhead makes of bench_daemon's figure), then the functions whose own time (tottime) grew most
from the baseline to the corpus run (what the bytes cost) with the caller that spent most in each,
and the baseline's own top functions outside start-up (what a run costs whatever it prints).
cProfile slows Python code far more than native code (libghostty-vt, zlib, the kernel), so the
shares lean towards Python; read them as where to look, and the CPU figures as an upper bound.
"""

from __future__ import annotations

import argparse
import os
import pstats
import signal
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import _corpora
from _corpora import COLUMNS, CORPUS_NAMES, EMPTY, LINES, REAL, Corpus
from _peers import CLEANUP, SERVER_STOP_TIMEOUT_S, MuxdPeer, run_benchmark
from bench_daemon import RUN_TIMEOUT_S, run_multiplexer

from muxd.emulator.backend import BACKENDS
from muxd.testing.wait import wait_until

DAEMON_START_TIMEOUT_S = 30.0
Key = tuple[str, int, str]
# The daemon's main module under a profiler timing this thread's CPU, on from SIGUSR1 to SIGUSR2
# (the harness's measuring window: not the start-up, nor the history capture after the clock stopped);
# the profile is written when main returns (kill-server) or exits.
PROFILED_DAEMON = r"""
import cProfile, runpy, signal, sys, time
out = sys.argv.pop(1)
profile = cProfile.Profile(time.thread_time)
signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
signal.signal(signal.SIGUSR2, lambda *_: profile.disable())
sys.argv[0] = "muxd.daemon.main"
try:
    runpy.run_module("muxd.daemon.main", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    profile.disable()
    profile.dump_stats(out)
"""


class ProfiledMuxdPeer(MuxdPeer):
    """MuxdPeer whose daemon runs in the foreground under cProfile, writing `profile` when it exits."""

    def __init__(self, backend: str, profile: Path) -> None:
        super().__init__(backend)
        self.profile = profile
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> ProfiledMuxdPeer:
        server = self.server
        self._process = subprocess.Popen(
            [sys.executable, "-c", PROFILED_DAEMON, str(self.profile), "--name", server.name], env=server.env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_until(server.socket_path.exists, timeout=DAEMON_START_TIMEOUT_S, message="profiled daemon listening")
        self.pid = server.pid = self._process.pid
        self._client = self._loop.run_until_complete(server.client(client_name="bench"))
        return self

    def new_pane(self, session: str, argv: list[str], columns: int = COLUMNS, lines: int = LINES) -> int:
        pane_pid = super().new_pane(session, argv, columns, lines)
        os.kill(self._profiled_pid(), signal.SIGUSR1)  # the run starts soon: gate, 0.3 s idle, release
        return pane_pid

    def capture(self, session: str, history_lines: int = 0) -> str:
        if history_lines:  # the clock has stopped (bench_daemon reads the history after it)
            os.kill(self._profiled_pid(), signal.SIGUSR2)
        return super().capture(session, history_lines)

    def _profiled_pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def stop(self) -> None:
        try:
            super().stop()  # kill-server: the daemon returns from main, and cProfile writes the file
        finally:
            if self._process is not None:
                try:
                    self._process.wait(timeout=SERVER_STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()


def profiled_run(backend: str, corpus: Corpus, workdir: Path, label: str) -> tuple[float, pstats.Stats]:
    """(server CPU s as bench_daemon measures it, the daemon's whole-life profile)."""
    profile = workdir / f"{label}.prof"
    result = run_multiplexer(f"muxd-{backend}", lambda: ProfiledMuxdPeer(backend, profile), corpus, workdir,
                             RUN_TIMEOUT_S)
    if result.error or result.cpu_s is None:
        raise RuntimeError(f"{label}: {result.error}")
    return result.cpu_s, pstats.Stats(str(profile))


def own_times(stats: pstats.Stats) -> dict[Key, tuple[int, float]]:
    """(calls, tottime) of each function."""
    return {key: (row[1], row[2]) for key, row in stats.stats.items()}  # type: ignore[attr-defined]


def where(key: Key) -> str:
    filename, line, name = key
    parts = Path(filename).parts
    short = "/".join(parts[parts.index("muxd"):]) if "muxd" in parts else Path(filename).name
    return f"{name} ({short}:{line})" if line else name


def top_caller(stats: pstats.Stats, key: Key) -> str:
    """The caller that spent the most (cumulative) time in `key`."""
    callers = stats.stats[key][4]  # type: ignore[attr-defined]
    if not callers:
        return "-"
    return where(max(callers.items(), key=lambda item: item[1][3])[0])


def print_rows(title: str, rows: list[tuple[Key, int, float]], total: float, stats: pstats.Stats) -> None:
    print(title)
    print(f"  {'own s':>7} {'share':>6} {'calls':>9}  function  <-  its main caller")
    for key, calls, seconds in rows:
        print(f"  {seconds:7.3f} {seconds / max(total, 1e-9):6.1%} {calls:9d}  {where(key)}  <-  "
              f"{top_caller(stats, key)}")
    print()


def write_corpus(name: str, mb: float, workdir: Path) -> Corpus:
    if name.startswith(REAL):
        logs = [log for log in _corpora.real_logs() if f"{REAL}-{log.parent.name}" == name]
        if not logs:
            raise SystemExit(f"no raw log for {name} under {_corpora.REAL_CORPUS_DIR}")
        return _corpora.write_real_corpus(logs[0], workdir, int(mb * 2**20))
    return _corpora.write_corpus(name, workdir, int(mb * 2**20))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=BACKENDS, default="ghostty")
    parser.add_argument("--corpus", default=f"{REAL}-aider",
                        help=f"{', '.join(CORPUS_NAMES)} or {REAL}-<agent> (a log of ../shared/corpus/real)")
    parser.add_argument("--mb", type=float, default=10.0, help="corpus size in MiB")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-profile-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        corpus = write_corpus(args.corpus, args.mb, workdir)
        empty = replace(_corpora.write_corpus(EMPTY, workdir, 0), columns=corpus.columns, lines=corpus.lines)
        base_cpu, base = profiled_run(args.backend, empty, workdir, "baseline")
        run_cpu, run = profiled_run(args.backend, corpus, workdir, "corpus")
    print(f"{args.backend} backend, {corpus.name} {corpus.size_bytes / 2**20:.1f} MiB at {corpus.columns}x"
          f"{corpus.lines}: server CPU under cProfile {run_cpu:.2f} s; the marker line alone {base_cpu:.2f} s")
    print()
    before, after = own_times(base), own_times(run)
    grown = sorted(((key, calls - before.get(key, (0, 0.0))[0], seconds - before.get(key, (0, 0.0))[1])
                    for key, (calls, seconds) in after.items()), key=lambda row: -row[2])
    total = sum(max(0.0, row[2]) for row in grown)
    print_rows(f"own time the corpus added over the baseline ({total:.2f} s in all), by function:",
               grown[:args.top], total, run)
    fixed = sorted(((key, calls, seconds) for key, (calls, seconds) in before.items()), key=lambda row: -row[2])
    print_rows(f"the baseline run (the marker line only), by own time ({sum(r[2] for r in fixed):.2f} s):",
               fixed[:args.top], sum(r[2] for r in fixed), base)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
