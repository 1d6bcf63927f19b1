"""What muxd's copy of scrolled-off rows costs against libghostty's parse of the same bytes.

    .venv/bin/python benchmarks/bench_history_copy.py [--flood-mb 4] [--runs 3]

Issue 29's goal 4: on the libghostty-vt backend, rows leaving the screen are copied into muxd's
own scrollback (ghostty_history.NativeHistory: formatted as VT text, SGR re-written, lines laid
out) and runs of simple lines skip the parser altogether (ghostty_flood.py, laid out straight
into the store). That copying ("layout") must cost less than libghostty's parse of the same
bytes. Each input is fed to muxd's emulator in 16 KiB reads (as a pane's slices come) with the
copying timed, and to a bare libghostty terminal of the same size (its own scrollback, nothing
copied) for the parse. Inputs: the two floods of the echo and flood benchmarks (CRLF line ends,
as a pane's tty makes them) and each real agent log of ../shared/corpus. Times are this
process's CPU time (a busy machine stretches wall time unevenly); prints the best of `--runs`
for each, and layout / parse (goal: below 1.00x).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _corpora import REAL_COLUMNS, REAL_LINES, real_logs
from _report import machine_note, print_table, ratio

import pyghostty
from muxd.config import DEFAULT_SCROLLBACK_BYTES
from muxd.emulator.ghostty_backend import GhosttyEmulator
from muxd.testing.floods import FLOODS, write_flood

READ_BYTES = 16 * 1024
FLOOD_COLUMNS, FLOOD_LINES = 100, 29  # the echo benchmark's pane


class LayoutClock:
    """Time spent in the wrapped calls, counting a call made inside another once."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0

    def wrap(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            started = time.process_time()
            try:
                return call(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.seconds += time.process_time() - started

        return timed


def layout_seconds(data: bytes, columns: int, lines: int) -> tuple[float, float]:
    """(seconds copying rows into muxd's scrollback, seconds of the whole feed) for `data`."""
    emulator = GhosttyEmulator(columns=columns, lines=lines, scrollback_bytes=DEFAULT_SCROLLBACK_BYTES)
    history = emulator._history
    clock = LayoutClock()
    # The copies of native rows, and the flood skipper's lines laid out straight into the store.
    history._copy = clock.wrap(history._copy)  # type: ignore[method-assign]
    history.store.append_source = clock.wrap(history.store.append_source)  # type: ignore[method-assign]
    started = time.process_time()
    for at in range(0, len(data), READ_BYTES):
        emulator.feed(data[at:at + READ_BYTES])
    emulator.history_size  # rows still waiting natively are copied when history is read
    return clock.seconds, time.process_time() - started


def parse_seconds(data: bytes, columns: int, lines: int) -> float:
    terminal = pyghostty.Terminal(columns, lines)
    started = time.process_time()
    for at in range(0, len(data), READ_BYTES):
        terminal.feed(data[at:at + READ_BYTES])
    return time.process_time() - started


def inputs(workdir: Path, flood_bytes: int) -> list[tuple[str, bytes, int, int]]:
    found = []
    for name in sorted(FLOODS):
        data = write_flood(name, workdir, flood_bytes).read_bytes().replace(b"\n", b"\r\n")
        found.append((name, data, FLOOD_COLUMNS, FLOOD_LINES))
    for log in real_logs():
        found.append((log.parent.name, log.read_bytes(), REAL_COLUMNS, REAL_LINES))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flood-mb", type=float, default=4.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="muxd-bench-") as workdir:
        for name, data, columns, lines in inputs(Path(workdir), int(args.flood_mb * 2**20)):
            layout, feed = min(layout_seconds(data, columns, lines) for _ in range(args.runs))
            parse = min(parse_seconds(data, columns, lines) for _ in range(args.runs))
            rows.append([name, f"{len(data) / 2**20:.1f}", f"{layout * 1000:.0f}", f"{feed * 1000:.0f}",
                         f"{parse * 1000:.0f}", ratio(layout, parse), ratio(feed, parse)])
    print(machine_note())
    print(f"fed in {READ_BYTES // 1024} KiB reads, best of {args.runs}; layout: muxd copying rows into its scrollback")
    print_table(["input", "MiB", "layout ms", "muxd feed ms", "ghostty parse ms", "layout/parse", "feed/parse"], rows)
    print("goal (issue 29): layout/parse < 1.00x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
