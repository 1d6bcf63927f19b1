"""Scrollback memory under floods of short rows: RSS per pane of muxd's daemon against tmux's server.

    .venv/bin/python benchmarks/bench_scrollback_memory.py [--panes 5] [--fill 2] [--flood all]

In N panes (80x24) of a private muxd daemon and N panes of a private tmux server (default
history-limit, 2000 lines), each pane prints the same row again and again until both
histories are full `--fill` times over (muxd: DEFAULT_SCROLLBACK_BYTES at
rows.row_size_bytes a row), then a marker line. The figure is the server's RSS growth once
every pane has settled, divided by N (bench_daemon.measure_memory), and the ratio
muxd/tmux. Floods:
- plain:  "ab"                 (muxd skips the emulation of such floods: source blocks)
- bold:   ESC[1m "ab" ESC[0m   (skipped too, with SGR)
- erased: "ab" ESC[K           (every row emulated: packed rows)
- full:   80 characters        (the largest plain row, for comparison)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from _corpora import LINES
from _peers import CLEANUP, MuxdPeer, TmuxPeer, run_benchmark
from bench_daemon import TMUX_DEFAULT_HISTORY_LINES, MemoryResult, fmt, measure_memory, print_table, ratio

from muxd.config import DEFAULT_SCROLLBACK_BYTES
from muxd.emulator.rows import row_size_bytes

# name -> (row, bytes of text it leaves in the history)
FLOODS = {"plain": ("ab", 2), "bold": ("\x1b[1mab\x1b[0m", 2), "erased": ("ab\x1b[K", 2), "full": ("x" * 80, 80)}
DEFAULT_PANES = 5
DEFAULT_FILL = 2


def muxd_history_rows(name: str) -> int:
    """Rows of flood `name` muxd's default scrollback holds."""
    return DEFAULT_SCROLLBACK_BYTES // row_size_bytes(FLOODS[name][1])


def write_flood(workdir: Path, name: str, fill: float) -> tuple[Path, str]:
    """A file filling both histories `fill` times over, then a marker line; returns (path, marker)."""
    rows = int(fill * max(muxd_history_rows(name), TMUX_DEFAULT_HISTORY_LINES)) + LINES
    marker = f"end of the {name} flood"
    path = workdir / f"flood-{name}.txt"
    path.write_bytes(f"{FLOODS[name][0]}\n".encode() * rows + f"{marker}\n".encode())
    return path, marker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panes", type=int, default=DEFAULT_PANES)
    parser.add_argument("--fill", type=float, default=DEFAULT_FILL, help="how many times over each history is filled")
    parser.add_argument("--flood", choices=[*FLOODS, "all"], default="all")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    print(f"{args.panes} panes per server; muxd scrollback {DEFAULT_SCROLLBACK_BYTES / 2**20:g} MiB, "
          f"tmux history-limit {TMUX_DEFAULT_HISTORY_LINES} lines; each history filled {args.fill:g} times over",
          flush=True)
    table: list[list[str]] = []
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="muxd-bench-", dir="/tmp"))
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        stack.callback(CLEANUP.kill_panes)
        for name in FLOODS if args.flood == "all" else [args.flood]:
            path, marker = write_flood(workdir, name, args.fill)
            results: dict[str, MemoryResult] = {}
            for peer, make in (("tmux", lambda: TmuxPeer(workdir, None)), ("muxd", MuxdPeer)):
                try:
                    results[peer] = measure_memory(peer, make, path, marker, args.panes)
                except Exception as exc:  # noqa: BLE001 - report it with the other figures
                    results[peer] = MemoryResult(peer=peer, error=f"FAILED ({type(exc).__name__}: {exc})")
                result = results[peer]
                print(f"  {name:<6} {peer:<4} {fmt(result.mib_per_pane)} MiB/pane, "
                      f"{result.retained_lines} rows kept {result.error or ''}", flush=True)
                per_row = (None if result.mib_per_pane is None or not result.retained_lines
                           else result.mib_per_pane * 2**20 / result.retained_lines)
                table.append([name, peer, fmt(result.mib_per_pane), fmt(result.rss_before_mib, digits=1),
                              fmt(result.rss_after_mib, digits=1), str(result.retained_lines or "-"),
                              fmt(per_row, digits=0), result.error or result.facts])
            table.append([name, "muxd/tmux", ratio(results["muxd"].mib_per_pane, results["tmux"].mib_per_pane),
                          "", "", "", "", ""])
    print()
    print_table(["flood", "server", "MiB/pane", "RSS before MiB", "RSS after MiB", "rows kept", "bytes/row",
                 "notes"], table)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
