"""The pyte and ghostty emulator backends on the real agent logs: MB/s and final screens.

Usage: python benchmarks/bench_emulator_backends.py [--corpus DIR] [--repeat N] [--columns 120] [--lines 40]

Feeds each `*_raw.bin` under DIR (default: ../shared/corpus/real, the Claude Code, Codex,
Gemini CLI and Aider byte logs) into a fresh emulator of each backend (muxd.emulator.backend
`new_emulator`, MUXD_EMULATOR's two values) at 120x40, in 64 KiB chunks as the daemon reads
a PTY, `repeat` times over. Prints CPU seconds and MB/s per log and backend, and whether the
final visible screens (`capture()`, plain) are identical; the first differing rows if not.
Nothing in the test suite needs the corpus.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from muxd.emulator.backend import new_emulator

CHUNK = 64 * 1024
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"


def run(backend: str, data: bytes, columns: int, lines: int, repeat: int) -> tuple[float, str]:
    """(CPU seconds to feed `data` `repeat` times, the final plain screen)."""
    emulator = new_emulator(columns, lines, backend=backend)
    start = time.process_time()
    for _ in range(repeat):
        for offset in range(0, len(data), CHUNK):
            emulator.feed(data[offset : offset + CHUNK])
    emulator.flush()
    seconds = time.process_time() - start
    return seconds, emulator.capture()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--columns", type=int, default=120)
    parser.add_argument("--lines", type=int, default=40)
    args = parser.parse_args()
    logs = sorted(args.corpus.glob("*/*_raw.bin")) or sorted(args.corpus.glob("*_raw.bin"))
    if not logs:
        raise SystemExit(f"no *_raw.bin logs under {args.corpus}")
    print(f"{args.columns}x{args.lines}, {args.repeat}x each log, {CHUNK // 1024} KiB chunks")
    print(f"{'log':<12}{'MB':>7}{'pyte s':>9}{'pyte MB/s':>11}{'ghostty s':>11}{'ghostty MB/s':>14}{'x':>7}  screens")
    totals = {"pyte": 0.0, "ghostty": 0.0}
    size_total = 0.0
    for path in logs:
        data = path.read_bytes()
        mb = len(data) * args.repeat / 1e6
        size_total += mb
        results = {b: run(b, data, args.columns, args.lines, args.repeat) for b in ("pyte", "ghostty")}
        for backend, (seconds, _) in results.items():
            totals[backend] += seconds
        (pyte_s, pyte_screen), (ghostty_s, ghostty_screen) = results["pyte"], results["ghostty"]
        same = pyte_screen == ghostty_screen
        print(f"{path.stem:<12}{mb:>7.2f}{pyte_s:>9.3f}{mb / pyte_s:>11.1f}{ghostty_s:>11.3f}"
              f"{mb / ghostty_s:>14.1f}{pyte_s / ghostty_s:>7.1f}  {'identical' if same else 'DIFFER'}")
        if not same:
            a, b = pyte_screen.split("\n"), ghostty_screen.split("\n")
            rows = [y for y in range(max(len(a), len(b))) if (a[y:y + 1] or [""]) != (b[y:y + 1] or [""])]
            print(f"    {len(rows)} rows differ, first {rows[:5]}")
            for y in rows[:2]:
                print(f"    pyte    {y:>2}: {(a[y:y + 1] or [''])[0][:100]!r}")
                print(f"    ghostty {y:>2}: {(b[y:y + 1] or [''])[0][:100]!r}")
    print(f"{'total':<12}{size_total:>7.2f}{totals['pyte']:>9.3f}{size_total / totals['pyte']:>11.1f}"
          f"{totals['ghostty']:>11.3f}{size_total / totals['ghostty']:>14.1f}{totals['pyte'] / totals['ghostty']:>7.1f}")


if __name__ == "__main__":
    main()
