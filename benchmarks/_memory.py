"""Server RSS per pane once panes have filled their scrollback: tmux against muxd on each emulator backend.

Shared by bench_daemon.py (memory part) and bench_scrollback_memory.py. Each server is private,
started fresh for one measurement and stopped in a `finally` (`_peers.running`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _corpora import COLUMNS, LINES
from _peers import (HOLD, PANE_HOLD_S, PROC_POLL_S, MuxdPeer, Peer, TmuxPeer, checked_facts, comm, running,
                    screen_lines, settle)
from _report import fmt, print_table, ratio

from muxd.testing.proc import rss_kib
from muxd.testing.wait import WaitTimeout, wait_until

MEMORY_SETTLE_S = 1.0     # after the last pane settled, before reading RSS: let the server go idle
FILL_TIMEOUT_S = 150.0    # one pane printing its rows until its screen settles
# Enough for every backend to keep 10k+ rows of 120 columns (ghostty counts ~1.2 KB a row, whole
# pages, against ~150 B in pyte's packed rows): a budget is a cap, not an allocation, so the
# figures compare equal histories. The daemon's default (2 MiB) keeps ~1,900 such rows on ghostty.
HISTORY_BUDGET_BYTES = 64 * 1024 * 1024
TMUX = "tmux"


def muxd_peer_name(backend: str) -> str:
    return f"muxd-{backend}"


@dataclass
class MemoryResult:
    peer: str
    mib_per_pane: float | None = None
    rss_before_mib: float | None = None
    rss_after_mib: float | None = None
    retained_lines: int | None = None    # rows `capture-pane -S -` returns for one pane
    facts: str = ""
    error: str | None = None

    @property
    def bytes_per_row(self) -> float | None:
        if self.mib_per_pane is None or not self.retained_lines:
            return None
        return self.mib_per_pane * 2**20 / self.retained_lines


def measure_memory(name: str, make: Callable[[], Peer], lines_file: Path, last_line: str, panes: int,
                   columns: int = COLUMNS, lines: int = LINES) -> MemoryResult:
    """RSS growth per pane of a fresh server once `panes` panes have each `cat`ed `lines_file` and settled."""
    result = MemoryResult(peer=name)
    with running(make) as peer:
        peer.new_pane("base", ["sh", "-c", f"exec sleep {PANE_HOLD_S}"], columns, lines)
        assert peer.pid is not None
        time.sleep(MEMORY_SETTLE_S)
        before = rss_kib(peer.pid)
        try:
            for index in range(panes):
                session = f"mem{index}"
                pane_pid = peer.new_pane(session, ["sh", "-c", f'cat "$1"{HOLD}', "sh", str(lines_file)],
                                         columns, lines)
                wait_until(lambda: comm(pane_pid) == "sleep", timeout=FILL_TIMEOUT_S, interval=PROC_POLL_S,
                           message=f"{name}: pane {session} output")
                settle(lambda: peer.capture(session), last_line, time.monotonic() + FILL_TIMEOUT_S)
        except WaitTimeout as exc:
            result.error = f"TIMEOUT ({exc})"
            return result
        time.sleep(MEMORY_SETTLE_S)
        after = rss_kib(peer.pid)
        result.facts = checked_facts(peer, "mem0", columns, lines)
        result.retained_lines = len(screen_lines(peer.capture("mem0", -1)))
    result.rss_before_mib, result.rss_after_mib = before / 1024, after / 1024
    result.mib_per_pane = (after - before) / 1024 / panes
    return result


def memory_peers(workdir: Path, backends: list[str], tmux_history: int | None,
                 muxd_scrollback: int | None) -> list[tuple[str, Callable[[], Peer]]]:
    """tmux (history-limit `tmux_history`, its default when None) and a muxd per backend."""
    peers: list[tuple[str, Callable[[], Peer]]] = [(TMUX, lambda: TmuxPeer(workdir, tmux_history))]
    for backend in backends:
        peers.append((muxd_peer_name(backend),
                      lambda backend=backend: MuxdPeer(backend, muxd_scrollback)))  # type: ignore[misc]
    return peers


def measure_all(peers: list[tuple[str, Callable[[], Peer]]], lines_file: Path, last_line: str, panes: int,
                columns: int, lines: int, label: str) -> dict[str, MemoryResult]:
    """measure_memory for each peer; a failure is reported with the other figures, not raised."""
    results: dict[str, MemoryResult] = {}
    for name, make in peers:
        try:
            results[name] = measure_memory(name, make, lines_file, last_line, panes, columns, lines)
        except Exception as exc:  # noqa: BLE001 - one broken peer must not lose the other figures
            results[name] = MemoryResult(peer=name, error=f"FAILED ({type(exc).__name__}: {exc})")
        r = results[name]
        print(f"  memory {label:<14} {name:<13} {fmt(r.mib_per_pane)} MiB/pane, {r.retained_lines} rows kept "
              f"{r.error or ''}", flush=True)
    return results


def memory_rows(label: str, results: dict[str, MemoryResult]) -> list[list[str]]:
    """Table rows: one per server, with tmux/muxd (>= 1.0: muxd holds no more than tmux) for each muxd."""
    tmux = results.get(TMUX)
    rows = []
    for name, r in results.items():
        versus = "" if name == TMUX or tmux is None else ratio(tmux.mib_per_pane, r.mib_per_pane)
        rows.append([label, name, fmt(r.mib_per_pane), fmt(r.rss_before_mib, digits=1), fmt(r.rss_after_mib, digits=1),
                     str(r.retained_lines or "-"), fmt(r.bytes_per_row, digits=0), versus, r.error or r.facts])
    return rows


def print_memory_table(rows: list[list[str]]) -> None:
    print_table(["output", "server", "MiB/pane", "RSS before MiB", "RSS after MiB", "rows kept", "bytes/row",
                 "tmux/muxd", "notes"], rows)
