"""Loaded by the daemons of `bench_history_daemon.py --entry-costs` (through sitecustomize.py here):
times, on the thread that runs them, the calls by which the loop enters the history's code, so
the bench can say how much of what recording costs is the history's own code and how much is
not (its effect on everything else: caches, the allocator, wakeups).

Each entry point's calls and wall seconds (perf_counter: a call here never blocks) are counted;
`OUTER` are the ways in (their sum is the history's direct cost on the loop), the rest are parts
of them. Counts are written as JSON to $MUXD_BENCH_ENTRY_COSTS/<pid>.json whenever the bench
writes a new label to $MUXD_BENCH_ENTRY_COSTS/mark (a window's start, its end). Each wrapped
call costs about a microsecond more: the bench prints that floor, measured in the same run."""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# (module, class or None for a function of the module, name); the module is patched once imported.
OUTER = [
    ("muxd.daemon.work.executions", "ExecutionService", "agent_changed"),  # every published state
    ("muxd.daemon.work.executions", "ExecutionService", "_tick"),          # the timers: a turn's end
    ("muxd.daemon.work.executions", "ExecutionService", "_stored"),        # a write done
    ("muxd.daemon.work.executions", "ExecutionService", "_output"),        # a shell's marks
    ("muxd.executions.transcript", "TranscriptBuffer", "add"),             # every read of a running turn
]
PARTS = [
    ("muxd.executions.tracker", "ExecutionTracker", "state_changed"),
    ("muxd.daemon.work.executions", "ExecutionService", "_begin"),
    ("muxd.daemon.work.executions", "ExecutionService", "_save"),
    ("muxd.daemon.work.executions", "ExecutionService", "_finish"),
    ("muxd.daemon.work.executions", "ExecutionService", "_store"),
    ("muxd.daemon.work.executions", "ExecutionService", "_ended"),
    ("muxd.daemon.work.execution_finish", None, "turn_rows"),
    ("muxd.daemon.work.execution_finish", None, "_completed"),
]
_POLL_S = 0.2

counts: dict[str, list[float]] = {}  # "Class.name" -> [calls, seconds]


def _timed(label: str, call: Callable[..., Any]) -> Callable[..., Any]:
    entry = counts.setdefault(label, [0, 0.0])

    @functools.wraps(call)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            entry[0] += 1
            entry[1] += time.perf_counter() - started

    return timed


def _patch(pending: list[tuple[str, str | None, str]]) -> list[tuple[str, str | None, str]]:
    """Wrap what `pending` names in the modules imported so far; what is left."""
    left = []
    for module_name, owner_name, name in pending:
        module = sys.modules.get(module_name)
        owner = getattr(module, owner_name, None) if owner_name else module
        call = getattr(owner, name, None)
        if call is None:  # not imported, or its import still runs (the loop's thread imports as this one looks)
            left.append((module_name, owner_name, name))
            continue
        setattr(owner, name, _timed(f"{owner_name or module_name.rsplit('.', 1)[1]}.{name}", call))
    return left


def _watch(folder: Path) -> None:
    pending = OUTER + PARTS
    seen = ""
    while True:
        if pending:
            pending = _patch(pending)
        try:
            mark = (folder / "mark").read_text()
        except OSError:
            mark = seen
        if mark != seen:
            seen = mark
            snapshot = {"mark": mark, "history": os.environ.get("MUXD_HISTORY"),
                        "outer": [f"{o}.{n}" for _, o, n in OUTER], "counts": counts}
            out = folder / f"{os.getpid()}.json"
            out.with_suffix(".tmp").write_text(json.dumps(snapshot))
            out.with_suffix(".tmp").replace(out)
        time.sleep(_POLL_S)


_started = False


def start(folder: str) -> None:
    """Time the daemon's calls; a client's process has nothing to time. The daemon is a fork of
    the client that starts it (client/daemon_fork.py), or an interpreter of its own whose command
    line is `-c BOOT --name NAME` (client/autostart.py)."""
    def begin() -> None:
        global _started
        if not _started:  # (the daemon's own forks, its panes' programs, inherit it set)
            _started = True
            threading.Thread(target=_wait_for_daemon, args=(Path(folder),), daemon=True, name="entry-costs").start()

    os.register_at_fork(after_in_child=begin)
    if sys.argv[:2] == ["-c", "--name"]:
        begin()


def _wait_for_daemon(folder: Path) -> None:
    for _ in range(600):
        if "muxd.daemon.server" in sys.modules:
            _watch(folder)
            return
        time.sleep(0.05)
