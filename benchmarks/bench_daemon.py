"""muxd's daemon against tmux and a bare PTY reader: server CPU, time to a settled screen, memory per pane.

    .venv/bin/python benchmarks/bench_daemon.py [--mb 20] [--corpus all] [--skip-memory]

Every server is private (its own socket in a temp dir), started fresh for each run and
stopped in a `finally`, even on Ctrl-C. See benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

import _corpora
from _corpora import COLUMNS, CORPUS_NAMES, LINES, Corpus

from muxd.config import DEFAULT_SCROLLBACK_BYTES
from muxd.emulator.rows import row_size_bytes
from muxd.testing.wait import WaitTimeout, wait_until

DEFAULT_CORPUS_MB = 20
TMUX_DEFAULT_HISTORY_LINES = 2000
# tmux run with this many history lines keeps about what muxd's byte budget keeps of full rows.
TMUX_MATCHED_HISTORY_LINES = DEFAULT_SCROLLBACK_BYTES // row_size_bytes(COLUMNS)
RUN_TIMEOUT_S = 150.0             # one peer on one corpus, from releasing `cat` to a settled screen
SETTLE_QUIET_S = 0.3              # the final screen must stay unchanged this long
SCREEN_POLL_S = 0.02
IDLE_BEFORE_START_S = 0.3         # let a new server finish starting the pane before the CPU baseline
PANE_HOLD_S = 900                 # panes sleep this long after their output; the harness kills them sooner
# Quick peers are run several times: their small figures are the ratios' denominators.
MIN_FAST_RUNS = 3
FAST_RUNS_BUDGET_S = 10.0
MEMORY_PANES = 5
MEMORY_HISTORY_LINES = 10_000
MEMORY_SETTLE_S = 1.0
RAW_PEER, TMUX_PEER, TMUX_HL_PEER, MUXD_PEER = "raw-pty", "tmux", "tmux-hl", "muxd"

# The pane waits on a FIFO so that a run starts when the harness says, not when the server is up.
GATED_CAT = 'read _ < "$1"; cat "$2"'
HOLD = f"; exec sleep {PANE_HOLD_S}"

# The raw peer: a process that owns a PTY, runs the gated `cat` on it and reads the master to EOF.
RAW_READER = r"""
import os, pty, subprocess, sys, time, fcntl, termios, struct
columns, lines, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
master, slave = pty.openpty()
fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
child = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
os.close(slave)
print("ready", child.pid, flush=True)
total = 0
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    total += len(chunk)
print(time.monotonic(), total, flush=True)
child.wait()
sys.stdin.read()
"""


from _peers import (GATE_OPEN_TIMEOUT_S, PROC_POLL_S, SERVER_STOP_TIMEOUT_S, cpu_seconds, comm, children, screen_lines, CLEANUP, Gate, TmuxPeer, MuxdPeer, Peer, run_benchmark, running)
from muxd.testing.proc import rss_kib


@dataclass
class RunResult:
    peer: str
    corpus: str
    cpu_s: float | None = None
    wall_s: float | None = None
    cat_done_s: float | None = None   # when the producer finished: the server had read all but a PTY buffer
    pty_bytes: int | None = None
    runs: int = 1
    facts: str = ""
    screen: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    error: str | None = None


def run_multiplexer(name: str, make: Callable[[], Peer], corpus: Corpus, workdir: Path,
                    timeout: float) -> RunResult:
    result = RunResult(peer=name, corpus=corpus.name)
    with running(make) as peer:
        gate = Gate(workdir / f"gate-{name}-{corpus.name}")
        session = f"bench-{corpus.name}"
        pane_pid = peer.new_pane(session, ["sh", "-c", GATED_CAT + HOLD, "sh", str(gate.path), str(corpus.path)])
        assert peer.pid is not None
        result.facts = checked_facts(peer, session)
        gate.open()
        time.sleep(IDLE_BEFORE_START_S)
        helpers = children(peer.pid) - CLEANUP.pane_pids
        if helpers:
            result.facts += f" (helper processes {sorted(helpers)} not counted)"
        cpu_before = cpu_seconds(peer.pid)
        started = time.monotonic()
        gate.release()
        deadline = started + timeout
        try:
            # Watch the producer through /proc, not the server, so polling does not slow the flood.
            wait_until(lambda: comm(pane_pid) == "sleep", timeout=timeout, interval=PROC_POLL_S,
                       message=f"{name}: cat of {corpus.name}")
            result.cat_done_s = time.monotonic() - started
            settled_screen, settled_at = settle(lambda: peer.capture(session), corpus.marker, deadline)
        except WaitTimeout as exc:
            result.error = f"TIMEOUT ({exc})"
            return result
        result.cpu_s = cpu_seconds(peer.pid) - cpu_before
        result.wall_s = settled_at - started
        result.screen = settled_screen
        result.history = screen_lines(peer.capture(session, -1))  # after the clock stopped: not counted
    return result


def checked_facts(peer: Peer, session: str) -> str:
    """The pane's size and scrollback setting, as a note; a pane of the wrong size stops the benchmark."""
    width, height, scrollback = peer.pane_facts(session)
    if (width, height) != (COLUMNS, LINES):
        raise RuntimeError(f"{type(peer).__name__} pane is {width}x{height}, not {COLUMNS}x{LINES}")
    return f"{width}x{height} {scrollback}"


def settle(capture: Callable[[], str], marker: str, deadline: float) -> tuple[list[str], float]:
    """The final screen and when it was first seen: it shows `marker` and stays the same SETTLE_QUIET_S."""
    candidate: list[str] | None = None
    seen_at = 0.0
    while True:
        screen = screen_lines(capture())
        now = time.monotonic()
        if marker not in screen:
            candidate = None
        elif screen != candidate:
            candidate, seen_at = screen, now
        elif now - seen_at >= SETTLE_QUIET_S:
            return candidate, seen_at
        if now >= deadline:
            raise WaitTimeout(f"screen showing {marker!r} did not settle")
        time.sleep(SCREEN_POLL_S)


def run_raw(corpus: Corpus, workdir: Path, timeout: float) -> RunResult:
    result = RunResult(peer=RAW_PEER, corpus=corpus.name, facts=f"{COLUMNS}x{LINES} pty, 64 KiB reads")
    gate = Gate(workdir / f"gate-raw-{corpus.name}")
    reader = subprocess.Popen([sys.executable, "-c", RAW_READER, str(COLUMNS), str(LINES),
                               "sh", "-c", GATED_CAT, "sh", str(gate.path), str(corpus.path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdout is not None and reader.stdin is not None
    try:
        ready, child_pid = read_line(reader, time.monotonic() + GATE_OPEN_TIMEOUT_S).split()
        CLEANUP.pane_pids.add(int(child_pid))
        gate.open()
        time.sleep(IDLE_BEFORE_START_S)
        cpu_before = cpu_seconds(reader.pid)
        started = time.monotonic()
        gate.release()
        try:
            eof_at, total = read_line(reader, started + timeout).split()
        except WaitTimeout as exc:
            result.error = f"TIMEOUT ({exc})"
            return result
        result.cpu_s = cpu_seconds(reader.pid) - cpu_before
        result.wall_s = result.cat_done_s = float(eof_at) - started
        result.pty_bytes = int(total)
    finally:
        reader.kill()
        reader.wait(timeout=SERVER_STOP_TIMEOUT_S)
        CLEANUP.kill_panes()
    return result


def read_line(process: subprocess.Popen[str], deadline: float) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(max(0.0, deadline - time.monotonic())):
            raise WaitTimeout("raw reader: no EOF in time")
    return process.stdout.readline().strip()


def repeated(peer: str, corpus: str, run: Callable[[], RunResult], repeat: int) -> RunResult:
    """`repeat` runs, or at least MIN_FAST_RUNS when runs are quick; each figure is the median of its runs."""
    runs: list[RunResult] = []
    began = time.monotonic()
    while len(runs) < repeat or (len(runs) < MIN_FAST_RUNS and time.monotonic() - began < FAST_RUNS_BUDGET_S):
        try:
            runs.append(run())
        except Exception as exc:  # noqa: BLE001 - one broken peer must not lose the other figures
            runs.append(RunResult(peer=peer, corpus=corpus, error=f"FAILED ({type(exc).__name__}: {exc})"))
        if runs[-1].error:
            return runs[-1]
    last = runs[-1]
    for name in ("cpu_s", "wall_s", "cat_done_s"):
        values = [getattr(r, name) for r in runs if getattr(r, name) is not None]
        setattr(last, name, statistics.median(values) if values else None)
    last.runs = len(runs)
    return last


# ------------------------------------------------------------------ memory


@dataclass
class MemoryResult:
    peer: str
    mib_per_pane: float | None = None
    rss_before_mib: float | None = None
    rss_after_mib: float | None = None
    retained_lines: int | None = None    # rows `capture-pane -S -` returns for one pane
    facts: str = ""
    error: str | None = None


def measure_memory(name: str, make: Callable[[], Peer], lines_file: Path, last_line: str,
                   panes: int) -> MemoryResult:
    result = MemoryResult(peer=name)
    with running(make) as peer:
        peer.new_pane("base", ["sh", "-c", f"exec sleep {PANE_HOLD_S}"])
        assert peer.pid is not None
        time.sleep(MEMORY_SETTLE_S)
        before = rss_kib(peer.pid)
        try:
            for index in range(panes):
                session = f"mem{index}"
                pane_pid = peer.new_pane(session, ["sh", "-c", f'cat "$1"{HOLD}', "sh", str(lines_file)])
                wait_until(lambda: comm(pane_pid) == "sleep", timeout=RUN_TIMEOUT_S, interval=PROC_POLL_S,
                           message=f"{name}: pane {session} output")
                settle(lambda: peer.capture(session), last_line, time.monotonic() + RUN_TIMEOUT_S)
        except WaitTimeout as exc:
            result.error = f"TIMEOUT ({exc})"
            return result
        time.sleep(MEMORY_SETTLE_S)
        after = rss_kib(peer.pid)
        result.facts = checked_facts(peer, "mem0")
        result.retained_lines = len(screen_lines(peer.capture("mem0", -1)))
    result.rss_before_mib, result.rss_after_mib = before / 1024, after / 1024
    result.mib_per_pane = (after - before) / 1024 / panes
    return result


# ------------------------------------------------------------------ report


def fmt(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.1f}x"


def compared_rows(muxd: RunResult, other: RunResult, what: str) -> tuple[list[str], list[str]]:
    """The rows to compare: the whole screen, or the history both kept (the last rows of the longer one)."""
    left, right = getattr(muxd, what), getattr(other, what)
    if what == "history":
        kept = min(len(left), len(right))
        left, right = left[len(left) - kept:], right[len(right) - kept:]
    return left, right


def compare(muxd: RunResult, other: RunResult | None, what: str) -> str:
    """MATCH or DIFF of muxd's final screen or history against another multiplexer's."""
    if other is None or muxd.error or other.error:
        return "n/a"
    left, right = compared_rows(muxd, other, what)
    if what == "history" and other.peer == TMUX_PEER and len(muxd.history) < len(other.history):
        return f"DIFF (muxd kept {len(muxd.history)} rows, tmux {len(other.history)})"
    if left == right:
        return "MATCH" if what == "screen" else f"MATCH ({len(left)} rows)"
    differing = [i for i, (x, y) in enumerate(zip(left, right)) if x != y]
    if not differing:
        return f"DIFF ({len(left)} vs {len(right)} rows)"
    return f"DIFF ({len(differing)} of {len(left)} rows, first {differing[0]})"


def first_difference(a: list[str], b: list[str], other: str) -> str:
    for row, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"row {row}:\n      muxd: {x[:100]!r}\n      {other}: {y[:100]!r}"
    return f"muxd has {len(a)} rows, {other} {len(b)}"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())


def report(corpora: list[Corpus], results: dict[str, dict[str, RunResult]],
           memory: list[MemoryResult], args: argparse.Namespace, tmux_hl: int) -> None:
    print()
    print(f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {platform.machine()}, "
          f"Linux {platform.release()}, Python {platform.python_version()}, "
          f"{subprocess.run(['tmux', '-V'], capture_output=True, text=True).stdout.strip()}")
    print(f"pane: {COLUMNS}x{LINES}; scrollback: muxd {DEFAULT_SCROLLBACK_BYTES / 2**20:.0f} MiB "
          f"(DEFAULT_SCROLLBACK_BYTES), tmux history-limit {TMUX_DEFAULT_HISTORY_LINES} lines (default), "
          + (f"tmux-hl history-limit {tmux_hl} lines" if tmux_hl else "tmux-hl not run"))
    print("corpora: " + ", ".join(f"{c.name} {c.size_bytes / 2**20:.1f} MiB (sha256 {c.sha256[:12]})"
                                    for c in corpora))
    print(f"each figure is the median of --repeat {args.repeat} runs, or of {MIN_FAST_RUNS} when runs are quick "
          f"(runs column)")
    print()
    rows = []
    for corpus in corpora:
        for name, run in results[corpus.name].items():
            mib_s = None if not run.wall_s else corpus.size_bytes / 2**20 / run.wall_s
            rows.append([corpus.name, name, fmt(run.cpu_s), fmt(run.wall_s), fmt(run.cat_done_s), fmt(mib_s, "", 1),
                         str(run.runs), str(len(run.history) or "-"), run.error or run.facts])
    print_table(["corpus", "peer", "server CPU s", "wall s", "cat done s", "MiB/s", "runs", "rows kept", "notes"],
                rows)
    print()
    rows = []
    for corpus in corpora:
        by_peer = results[corpus.name]
        muxd, tmux, raw = by_peer[MUXD_PEER], by_peer[TMUX_PEER], by_peer.get(RAW_PEER)
        hl = by_peer.get(TMUX_HL_PEER)
        rows.append([corpus.name, ratio(muxd.cpu_s, tmux.cpu_s), ratio(muxd.wall_s, tmux.wall_s),
                     ratio(muxd.cpu_s, hl.cpu_s) if hl else "-", ratio(muxd.wall_s, hl.wall_s) if hl else "-",
                     ratio(muxd.cpu_s, raw.cpu_s) if raw else "-", ratio(muxd.wall_s, raw.wall_s) if raw else "-",
                     compare(muxd, tmux, "screen"), compare(muxd, tmux, "history"), compare(muxd, hl, "history")])
    print_table(["corpus", "muxd/tmux CPU", "muxd/tmux wall", "muxd/tmux-hl CPU", "muxd/tmux-hl wall",
                 "muxd/raw CPU", "muxd/raw wall", "screen", "history vs tmux", "history vs tmux-hl"],
                rows)
    for corpus in corpora:
        by_peer = results[corpus.name]
        muxd = by_peer[MUXD_PEER]
        for other, what in ((TMUX_PEER, "screen"), (TMUX_PEER, "history"), (TMUX_HL_PEER, "history")):
            if not compare(muxd, by_peer.get(other), what).startswith("DIFF"):
                continue
            left, right = compared_rows(muxd, by_peer[other], what)
            print(f"  {corpus.name} {what} vs {other} differs at {first_difference(left, right, other)}")
            if corpus.name == "tui" and what == "history":
                print("    (tmux also files into history the rows scrolled out of a scroll region that does"
                      " not start at the top, and the whole screen on ED 2 (scroll-on-clear); xterm does"
                      " neither, so muxd may differ here by design)")
    if memory:
        print()
        print(f"memory: server RSS growth per pane, {args.memory_panes} panes each holding "
              f"{MEMORY_HISTORY_LINES} lines of {COLUMNS}-column scrollback (VmRSS)")
        print_table(["peer", "MiB/pane", "RSS before", "RSS after", "rows kept", "notes"],
                    [[m.peer, fmt(m.mib_per_pane), fmt(m.rss_before_mib, " MiB", 1), fmt(m.rss_after_mib, " MiB", 1),
                      str(m.retained_lines or "-"), m.error or m.facts] for m in memory])
        by_name = {m.peer: m for m in memory}
        if MUXD_PEER in by_name and TMUX_PEER in by_name:
            print(f"muxd/tmux memory per pane: {ratio(by_name[MUXD_PEER].mib_per_pane, by_name[TMUX_PEER].mib_per_pane)}")


# ------------------------------------------------------------------ main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=DEFAULT_CORPUS_MB, help="size of each corpus in MiB")
    parser.add_argument("--tui-mb", type=float, help="size of the TUI corpus (default: --mb)")
    parser.add_argument("--corpus", choices=[*CORPUS_NAMES, "all"], default="all")
    parser.add_argument("--skip-memory", action="store_true", help="skip the memory-per-pane figure")
    parser.add_argument("--memory-panes", type=int, default=MEMORY_PANES)
    parser.add_argument("--tmux-history", type=int, default=TMUX_MATCHED_HISTORY_LINES,
                        help="history-limit of the extra tmux-hl run (0: skip it)")
    parser.add_argument("--no-raw", action="store_true", help="skip the raw PTY reference")
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the median is shown")
    parser.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S, help="seconds allowed per run")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    names = list(CORPUS_NAMES) if args.corpus == "all" else [args.corpus]
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-bench-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        corpora = []
        for name in names:
            mib = args.tui_mb if name == "tui" and args.tui_mb else args.mb
            corpora.append(_corpora.write_corpus(name, workdir, int(mib * 2**20)))
            print(f"corpus {name}: {corpora[-1].size_bytes / 2**20:.1f} MiB", flush=True)
        peers: list[tuple[str, Callable[[], Peer]]] = [
            (TMUX_PEER, lambda: TmuxPeer(workdir, None)),
            (MUXD_PEER, MuxdPeer),
        ]
        if args.tmux_history:
            peers.insert(1, (TMUX_HL_PEER, lambda: TmuxPeer(workdir, args.tmux_history)))
        results: dict[str, dict[str, RunResult]] = {}
        for corpus in corpora:
            results[corpus.name] = {}
            if not args.no_raw:
                results[corpus.name][RAW_PEER] = repeated(
                    RAW_PEER, corpus.name, lambda: run_raw(corpus, workdir, args.timeout), args.repeat)
                progress(results[corpus.name][RAW_PEER])
            for name, make in peers:
                results[corpus.name][name] = repeated(
                    name, corpus.name, lambda: run_multiplexer(name, make, corpus, workdir, args.timeout), args.repeat)
                progress(results[corpus.name][name])
        memory: list[MemoryResult] = []
        if not args.skip_memory:
            lines_file, last_line = _corpora.write_full_rows(workdir, MEMORY_HISTORY_LINES + LINES - 1)
            for name, make in ((TMUX_PEER, lambda: TmuxPeer(workdir, MEMORY_HISTORY_LINES)), (MUXD_PEER, MuxdPeer)):
                try:
                    memory.append(measure_memory(name, make, lines_file, last_line, args.memory_panes))
                except Exception as exc:  # noqa: BLE001 - report it with the other figures
                    memory.append(MemoryResult(peer=name, error=f"FAILED ({type(exc).__name__}: {exc})"))
                print(f"memory {name}: {fmt(memory[-1].mib_per_pane)} MiB/pane {memory[-1].error or ''}", flush=True)
        report(corpora, results, memory, args, args.tmux_history)
        if args.json:
            args.json.write_text(json.dumps({
                "nproc": len(os.sched_getaffinity(0)),
                "corpora": [{**asdict(c), "path": None} for c in corpora],
                "runs": {c: {p: {k: v for k, v in asdict(r).items() if k not in ("screen", "history")}
                             for p, r in by_peer.items()} for c, by_peer in results.items()},
                "checks": {c.name: {f"{what} vs {other}": compare(results[c.name][MUXD_PEER],
                                                                   results[c.name].get(other), what)
                                    for other, what in ((TMUX_PEER, "screen"), (TMUX_PEER, "history"),
                                                        (TMUX_HL_PEER, "history"))} for c in corpora},
                "memory": [asdict(m) for m in memory],
            }, indent=2))
    return 0


def progress(run: RunResult) -> None:
    print(f"  {run.corpus:<7} {run.peer:<8} CPU {fmt(run.cpu_s)} s  wall {fmt(run.wall_s)} s  {run.error or ''}",
          flush=True)


if __name__ == "__main__":
    run_benchmark(main)
