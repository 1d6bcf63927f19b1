"""Scrollback memory: RSS per pane of muxd's daemon, on each emulator backend, against tmux's server.

    .venv/bin/python benchmarks/bench_scrollback_memory.py [--what all] [--backend both] [--panes 5]
        [--fill 2] [--flood all] [--rows 10000] [--columns 120]

Two measurements, each in N panes of a private tmux server and of a private muxd daemon per
backend (MUXD_EMULATOR), each pane `cat`ing a file; the figure is the server's RSS growth once
every pane has settled, divided by N (_memory.measure_memory), with the ratio tmux/muxd
(>= 1.0: muxd holds no more than tmux).

**floods** (80x24, default scrollback on both sides: muxd DEFAULT_SCROLLBACK_BYTES, tmux
history-limit 2000): each pane prints the same row again and again until both histories are
full `--fill` times over (muxd: at rows.row_size_bytes a row), then a marker line:
- plain:  "ab"                 (muxd's pyte backend skips the emulation of such floods: source blocks)
- bold:   ESC[1m "ab" ESC[0m   (skipped too, with SGR)
- erased: "ab" ESC[K           (every row emulated: packed rows)
- full:   80 characters        (the largest plain row, for comparison)

**rows** (`--columns` x 40): `--rows` distinct numbered rows of `--columns` - 20 characters,
plain and with a 256-colour run every 8 characters; tmux gets history-limit `--rows`, muxd a
scrollback budget large enough that every backend keeps every row (`--scrollback-bytes`), so
both hold the same history. "rows kept" checks it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import _corpora
from _corpora import LINES
from _memory import HISTORY_BUDGET_BYTES, measure_all, memory_peers, memory_rows, print_memory_table
from _peers import CLEANUP, TMUX_DEFAULT_HISTORY_LINES, run_benchmark

from muxd.config import DEFAULT_SCROLLBACK_BYTES
from muxd.emulator.backend import BACKENDS
from muxd.emulator.rows import row_size_bytes

# name -> (row, bytes of text it leaves in the history)
FLOODS = {"plain": ("ab", 2), "bold": ("\x1b[1mab\x1b[0m", 2), "erased": ("ab\x1b[K", 2), "full": ("x" * 80, 80)}
DEFAULT_PANES = 5
DEFAULT_FILL = 2
DEFAULT_ROWS = 10_000
DEFAULT_ROW_COLUMNS = 120
ROW_LINES = 40
ROW_MARGIN_COLUMNS = 20   # rows are this much shorter than the pane, as most output is


def muxd_history_rows(name: str) -> int:
    """Rows of flood `name` muxd's default scrollback holds (pyte's packed rows)."""
    return DEFAULT_SCROLLBACK_BYTES // row_size_bytes(FLOODS[name][1])


def write_flood(workdir: Path, name: str, fill: float) -> tuple[Path, str]:
    """A file filling both histories `fill` times over, then a marker line; returns (path, marker)."""
    rows = int(fill * max(muxd_history_rows(name), TMUX_DEFAULT_HISTORY_LINES)) + LINES
    marker = f"end of the {name} flood"
    path = workdir / f"flood-{name}.txt"
    path.write_bytes(f"{FLOODS[name][0]}\n".encode() * rows + f"{marker}\n".encode())
    return path, marker


def floods(args: argparse.Namespace, backends: list[str], workdir: Path) -> list[list[str]]:
    table: list[list[str]] = []
    peers = memory_peers(workdir, backends, None, None)
    for name in FLOODS if args.flood == "all" else [args.flood]:
        path, marker = write_flood(workdir, name, args.fill)
        table += memory_rows(name, measure_all(peers, path, marker, args.panes, 80, LINES, name))
    return table


def history_rows(args: argparse.Namespace, backends: list[str], workdir: Path) -> list[list[str]]:
    table: list[list[str]] = []
    peers = memory_peers(workdir, backends, args.rows, args.scrollback_bytes)
    for colour in (False, True):
        label = f"{args.rows} rows{' colour' if colour else ''}"
        path, last = _corpora.write_full_rows(workdir, args.rows + ROW_LINES - 1, columns=args.columns,
                                              width=args.columns - ROW_MARGIN_COLUMNS, colour=colour)
        table += memory_rows(label, measure_all(peers, path, last, args.panes, args.columns, ROW_LINES, label))
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--what", choices=("floods", "rows", "all"), default="all")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both",
                        help="muxd's emulator backend(s), one daemon each (MUXD_EMULATOR)")
    parser.add_argument("--panes", type=int, default=DEFAULT_PANES)
    parser.add_argument("--fill", type=float, default=DEFAULT_FILL,
                        help="floods: how many times over each history is filled")
    parser.add_argument("--flood", choices=[*FLOODS, "all"], default="all")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows: rows of scrollback each pane fills")
    parser.add_argument("--columns", type=int, default=DEFAULT_ROW_COLUMNS, help="rows: the panes' width")
    parser.add_argument("--scrollback-bytes", type=int, default=HISTORY_BUDGET_BYTES,
                        help="rows: muxd's scrollback budget per pane (a cap)")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    print(f"{args.panes} panes per server; muxd backends {', '.join(backends)}", flush=True)
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-bench-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        flood_table = floods(args, backends, workdir) if args.what in ("floods", "all") else []
        rows_table = history_rows(args, backends, workdir) if args.what in ("rows", "all") else []
    if flood_table:
        print(f"\nfloods, 80x24: muxd scrollback {DEFAULT_SCROLLBACK_BYTES / 2**20:g} MiB (default), tmux "
              f"history-limit {TMUX_DEFAULT_HISTORY_LINES} (default); each history filled {args.fill:g} times over")
        print_memory_table(flood_table)
    if rows_table:
        print(f"\nrows, {args.columns}x{ROW_LINES}: {args.rows} rows of {args.columns - ROW_MARGIN_COLUMNS} "
              f"characters; tmux history-limit {args.rows}, muxd scrollback {args.scrollback_bytes / 2**20:g} MiB")
        print_memory_table(rows_table)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
