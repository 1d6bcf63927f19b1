"""muxd's daemon on each emulator backend against tmux and a bare PTY reader: server CPU, time to a
settled screen, captures compared, memory per pane.

    .venv/bin/python benchmarks/bench_daemon.py [--mb 20] [--corpus all] [--backend both] [--skip-memory]

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
from _corpora import COLUMNS, CORPUS_NAMES, EMPTY, LINES, REAL, REAL_CORPUS_DIR, Corpus
from _memory import (HISTORY_BUDGET_BYTES, MemoryResult, measure_all, memory_peers, memory_rows, muxd_peer_name,
                     print_memory_table)
from _peers import (CLEANUP, GATE_OPEN_TIMEOUT_S, HOLD, PROC_POLL_S, SERVER_STOP_TIMEOUT_S,
                    TMUX_DEFAULT_HISTORY_LINES, Gate, MuxdPeer, Peer, TmuxPeer, checked_facts, children, comm,
                    cpu_seconds, run_benchmark, running, screen_lines, settle)
from _report import fmt, print_table, ratio

from muxd.config import DEFAULT_SCROLLBACK_BYTES
from muxd.emulator.backend import BACKENDS
from muxd.emulator.rows import row_size_bytes
from muxd.testing.wait import WaitTimeout, wait_until

DEFAULT_CORPUS_MB = 20
# Each real log is repeated to about this much: a replay costs each server 1-2 s of CPU, so the
# CPU clock's 10 ms ticks and a busy machine's noise stay within a few percent of the ratio.
DEFAULT_REAL_MB = 40
# tmux run with this many history lines keeps about what muxd's byte budget keeps of full rows (pyte).
TMUX_MATCHED_HISTORY_LINES = DEFAULT_SCROLLBACK_BYTES // row_size_bytes(COLUMNS)
RUN_TIMEOUT_S = 150.0             # one peer on one corpus, from releasing `cat` to a settled screen
IDLE_BEFORE_START_S = 0.3         # let a new server finish starting the pane before the CPU baseline
# Quick peers are run several times: their small figures are the ratios' denominators.
MIN_FAST_RUNS = 3
FAST_RUNS_BUDGET_S = 10.0
MEMORY_PANES = 5
MEMORY_HISTORY_LINES = 10_000
RAW_PEER, TMUX_PEER, TMUX_HL_PEER = "raw-pty", "tmux", "tmux-hl"

# The pane waits on a FIFO so that a run starts when the harness says, not when the server is up.
# Echo is off: the real logs query the terminal (DA, cursor position, XTVERSION), and the line
# discipline would echo the multiplexer's replies into the output at no fixed point (tmux and muxd
# do not answer every query alike).
GATED_CAT = 'stty -echo; read _ < "$1"; cat "$2"'

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


@dataclass
class RunResult:
    peer: str
    corpus: str
    cpu_s: float | None = None
    wall_s: float | None = None
    cat_done_s: float | None = None   # when the producer finished: the server had read all but a PTY buffer
    pty_bytes: int | None = None
    captures: int = 0                 # capture requests the harness made inside the CPU window (settling)
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
        pane_pid = peer.new_pane(session, ["sh", "-c", GATED_CAT + HOLD, "sh", str(gate.path), str(corpus.path)],
                                 corpus.columns, corpus.lines)
        assert peer.pid is not None
        result.facts = checked_facts(peer, session, corpus.columns, corpus.lines)
        gate.open()
        time.sleep(IDLE_BEFORE_START_S)
        helpers = {pid: cpu_seconds(pid) for pid in children(peer.pid) - CLEANUP.pane_pids}
        cpu_before = cpu_seconds(peer.pid)
        started = time.monotonic()
        gate.release()
        deadline = started + timeout
        try:
            # Watch the producer through /proc, not the server, so polling does not slow the flood.
            wait_until(lambda: comm(pane_pid) == "sleep", timeout=timeout, interval=PROC_POLL_S,
                       message=f"{name}: cat of {corpus.name}")
            result.cat_done_s = time.monotonic() - started
            def capture() -> str:
                result.captures += 1
                return peer.capture(session)
            settled_screen, settled_at = settle(capture, corpus.marker, deadline)
        except WaitTimeout as exc:
            result.error = f"TIMEOUT ({exc})"
            return result
        result.cpu_s = cpu_seconds(peer.pid) - cpu_before
        result.wall_s = settled_at - started
        if helpers:  # e.g. muxd's pane watchdog: named with its CPU, not counted in the server's
            result.facts += "; not counted: " + ", ".join(
                f"{helper_name(pid)} {helper_cpu(pid, before)}" for pid, before in helpers.items())
        result.screen = settled_screen
        result.history = screen_lines(peer.capture(session, -1))  # after the clock stopped: not counted
        if isinstance(peer, MuxdPeer) and peer.fell_back():  # logged when the pane started: read it now
            result.facts = checked_facts(peer, session, corpus.columns, corpus.lines)
    return result


def helper_name(pid: int) -> str:
    """A helper process as a note: its program's file name (`python x.py` gives x.py)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().decode(errors="replace").split("\0")
    except OSError:
        return f"pid {pid}"
    scripts = [Path(a).name for a in argv if a.endswith(".py")]
    return scripts[0] if scripts else Path(argv[0]).name


def helper_cpu(pid: int, before: float) -> str:
    try:
        return f"{cpu_seconds(pid) - before:.2f} s CPU"
    except OSError:
        return "(exited)"


def run_raw(corpus: Corpus, workdir: Path, timeout: float) -> RunResult:
    result = RunResult(peer=RAW_PEER, corpus=corpus.name, facts=f"{corpus.columns}x{corpus.lines} pty, 64 KiB reads")
    gate = Gate(workdir / f"gate-raw-{corpus.name}")
    reader = subprocess.Popen([sys.executable, "-c", RAW_READER, str(corpus.columns), str(corpus.lines),
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


# ------------------------------------------------------------------ captures compared


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


CHECKS = ((TMUX_PEER, "screen"), (TMUX_PEER, "history"), (TMUX_HL_PEER, "history"))


# ------------------------------------------------------------------ report


def report(corpora: list[Corpus], results: dict[str, dict[str, RunResult]], muxd_names: list[str],
           memory: list[list[str]], args: argparse.Namespace) -> None:
    print()
    print(f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {platform.machine()}, "
          f"Linux {platform.release()}, Python {platform.python_version()}, "
          f"{subprocess.run(['tmux', '-V'], capture_output=True, text=True).stdout.strip()}, load "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(f"panes: {COLUMNS}x{LINES} (synthetic corpora), {_corpora.REAL_COLUMNS}x{_corpora.REAL_LINES} (real logs); "
          f"scrollback: muxd {DEFAULT_SCROLLBACK_BYTES / 2**20:.0f} MiB (DEFAULT_SCROLLBACK_BYTES), tmux history-limit "
          f"{TMUX_DEFAULT_HISTORY_LINES} lines (default), "
          + (f"tmux-hl history-limit {args.tmux_history} lines (synthetic corpora)" if args.tmux_history
             else "tmux-hl not run"))
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
                         str(run.runs), str(run.captures or "-"), str(len(run.history) or "-"), run.error or run.facts])
    print_table(["corpus", "peer", "server CPU s", "wall s", "cat done s", "MiB/s", "runs", "captures", "rows kept",
                 "notes"], rows)
    print()
    print("tmux/muxd >= 1.0: muxd used no more than tmux; muxd/raw: times the bare PTY reader's CPU")
    rows = []
    for corpus in corpora:
        by_peer = results[corpus.name]
        tmux, hl, raw = by_peer[TMUX_PEER], by_peer.get(TMUX_HL_PEER), by_peer.get(RAW_PEER)
        for muxd_name in muxd_names:
            muxd = by_peer[muxd_name]
            rows.append([corpus.name, muxd_name, ratio(tmux.cpu_s, muxd.cpu_s), ratio(tmux.wall_s, muxd.wall_s),
                         ratio(hl.cpu_s, muxd.cpu_s) if hl else "-", ratio(muxd.cpu_s, raw.cpu_s) if raw else "-",
                         *(compare(muxd, by_peer.get(other), what) for other, what in CHECKS)])
    print_table(["corpus", "muxd", "tmux/muxd CPU", "tmux/muxd wall", "tmux-hl/muxd CPU", "muxd/raw CPU",
                 "screen vs tmux", "history vs tmux", "history vs tmux-hl"], rows)
    for corpus in corpora:
        by_peer = results[corpus.name]
        for muxd_name in muxd_names:
            for other, what in CHECKS:
                verdict = compare(by_peer[muxd_name], by_peer.get(other), what)
                if not verdict.startswith("DIFF") or "kept" in verdict:  # fewer rows kept says it all
                    continue
                left, right = compared_rows(by_peer[muxd_name], by_peer[other], what)
                print(f"  {corpus.name} {muxd_name} {what} vs {other} differs at "
                      f"{first_difference(left, right, other)}")
    if any(c.name.startswith(REAL) for c in corpora):
        print()
        for muxd_name in muxd_names:
            verdicts = [f"{c.name.removeprefix(REAL + '-')} "
                        + compare(results[c.name][muxd_name], results[c.name][TMUX_PEER], "screen")
                        for c in corpora if c.name.startswith(REAL)]
            print(f"real logs at {_corpora.REAL_COLUMNS}x{_corpora.REAL_LINES}, {muxd_name}'s final screen "
                  "against tmux's: " + ", ".join(verdicts))
    if any(c.name == "tui" for c in corpora):
        print("(tui history: tmux also files into history the rows scrolled out of a scroll region that does not"
              " start at the top, and the whole screen on ED 2 (scroll-on-clear); xterm does neither, so muxd may"
              " differ there by design)")
    if memory:
        print()
        print(f"memory: server RSS growth per pane, {args.memory_panes} panes each holding {MEMORY_HISTORY_LINES} "
              f"rows of {COLUMNS}-column scrollback (VmRSS); tmux history-limit {MEMORY_HISTORY_LINES}, muxd "
              f"scrollback {HISTORY_BUDGET_BYTES >> 20} MiB (a cap: every backend keeps every row)")
        print_memory_table(memory)


# ------------------------------------------------------------------ main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=DEFAULT_CORPUS_MB, help="size of each synthetic corpus in MiB")
    parser.add_argument("--tui-mb", type=float, help="size of the TUI corpus (default: --mb)")
    parser.add_argument("--real-mb", type=float, default=DEFAULT_REAL_MB,
                        help="MiB of each real log (repeated whole to about this size)")
    parser.add_argument("--real-dir", type=Path, default=REAL_CORPUS_DIR, help="where the real logs are")
    parser.add_argument("--corpus", choices=[*CORPUS_NAMES, REAL, EMPTY, "all"], default="all",
                        help=f"all: the synthetic ones and {REAL}; {EMPTY}: the marker line alone, what a run costs "
                             "whatever it prints (captures while settling, first use of the emulator)")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both",
                        help="muxd's emulator backend(s), one daemon run each (MUXD_EMULATOR)")
    parser.add_argument("--skip-memory", action="store_true", help="skip the memory-per-pane figure")
    parser.add_argument("--memory-panes", type=int, default=MEMORY_PANES)
    parser.add_argument("--tmux-history", type=int, default=TMUX_MATCHED_HISTORY_LINES,
                        help="history-limit of the extra tmux-hl run on the synthetic corpora (0: skip it)")
    parser.add_argument("--no-raw", action="store_true", help="skip the raw PTY reference")
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the median is shown")
    parser.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S, help="seconds allowed per run")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    return parser.parse_args(argv)


def write_corpora(args: argparse.Namespace, workdir: Path) -> list[Corpus]:
    corpora = []
    if args.corpus == EMPTY:
        corpora.append(_corpora.write_corpus(EMPTY, workdir, 0))
    for name in (CORPUS_NAMES if args.corpus == "all" else [args.corpus] if args.corpus in CORPUS_NAMES else []):
        mib = args.tui_mb if name == "tui" and args.tui_mb else args.mb
        corpora.append(_corpora.write_corpus(name, workdir, int(mib * 2**20)))
    if args.corpus in (REAL, "all"):
        logs = _corpora.real_logs(args.real_dir)
        if not logs:
            print(f"corpus real: skipped, no */*_raw.bin under {args.real_dir} "
                  "(the corpus lives in ../shared/corpus beside the repository)")
        for log in logs:
            corpora.append(_corpora.write_real_corpus(log, workdir, int(args.real_mb * 2**20)))
    for corpus in corpora:
        print(f"corpus {corpus.name}: {corpus.size_bytes / 2**20:.1f} MiB, {corpus.columns}x{corpus.lines}", flush=True)
    return corpora


def run_corpus(corpus: Corpus, peers: list[tuple[str, Callable[[], Peer]]], args: argparse.Namespace,
               workdir: Path) -> dict[str, RunResult]:
    results: dict[str, RunResult] = {}
    if not args.no_raw:
        results[RAW_PEER] = repeated(RAW_PEER, corpus.name, lambda: run_raw(corpus, workdir, args.timeout), args.repeat)
        progress(results[RAW_PEER])
    for name, make in peers:
        if name == TMUX_HL_PEER and corpus.name.startswith(REAL):
            continue  # its history-limit is matched to 80-column rows
        results[name] = repeated(name, corpus.name,
                                 lambda: run_multiplexer(name, make, corpus, workdir, args.timeout), args.repeat)
        progress(results[name])
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    muxd_names = [muxd_peer_name(b) for b in backends]
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-bench-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        corpora = write_corpora(args, workdir)
        if not corpora and args.skip_memory:
            return 1
        peers: list[tuple[str, Callable[[], Peer]]] = [(TMUX_PEER, lambda: TmuxPeer(workdir, None))]
        if args.tmux_history:
            peers.append((TMUX_HL_PEER, lambda: TmuxPeer(workdir, args.tmux_history)))
        peers += [(muxd_peer_name(b), lambda b=b: MuxdPeer(b)) for b in backends]  # type: ignore[misc]
        results = {corpus.name: run_corpus(corpus, peers, args, workdir) for corpus in corpora}
        memory: list[list[str]] = []
        memory_results: dict[str, MemoryResult] = {}
        if not args.skip_memory:
            lines_file, last_line = _corpora.write_full_rows(workdir, MEMORY_HISTORY_LINES + LINES - 1)
            memory_results = measure_all(memory_peers(workdir, backends, MEMORY_HISTORY_LINES, HISTORY_BUDGET_BYTES),
                                         lines_file, last_line, args.memory_panes, COLUMNS, LINES, "80-col rows")
            memory = memory_rows(f"{COLUMNS}-col rows", memory_results)
        report(corpora, results, muxd_names, memory, args)
        if args.json:
            args.json.write_text(json.dumps({
                "nproc": len(os.sched_getaffinity(0)),
                "corpora": [{**asdict(c), "path": None} for c in corpora],
                "runs": {c: {p: {k: v for k, v in asdict(r).items() if k not in ("screen", "history")}
                             for p, r in by_peer.items()} for c, by_peer in results.items()},
                "checks": {c.name: {m: {f"{what} vs {other}": compare(results[c.name][m], results[c.name].get(other),
                                                                      what) for other, what in CHECKS}
                                    for m in muxd_names} for c in corpora},
                "memory": {name: asdict(m) for name, m in memory_results.items()},
            }, indent=2))
    return 0


def progress(run: RunResult) -> None:
    print(f"  {run.corpus:<12} {run.peer:<12} CPU {fmt(run.cpu_s)} s  wall {fmt(run.wall_s)} s  {run.error or ''}",
          flush=True)


if __name__ == "__main__":
    run_benchmark(main)
