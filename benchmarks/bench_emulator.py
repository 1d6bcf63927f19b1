"""Emulator throughput and scrollback memory, against pyte (and tmux for memory) in the same run.

Usage: python benchmarks/bench_emulator.py [--mb 20] [--baseline-mb 1]

For ~20 MB corpora (plain lines, SGR-coloured lines, TUI-style redraws; then the daemon
benchmark's three from benchmarks/_corpora.py, whose plain text has tab indentation) prints
MB/s and CPU seconds for pyte.Screen + ByteStream, pyte.HistoryScreen and muxd's Emulator
(fed in 64 KiB chunks, as the daemon reads a PTY), and the ratio muxd/pyte. pyte runs on a smaller
slice of each corpus (it does ~1 MB/s), which the output says. Then the memory of 10k
lines of 80-column scrollback: Emulator (flood-skipped and fully emulated) vs HistoryScreen,
and a tmux pane if tmux is installed.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Callable

import pyte

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _corpora import write_corpus  # noqa: E402  (this directory is on sys.path when run as a script)
from muxd.config import PTY_READ_CHUNK_BYTES  # noqa: E402
from muxd.emulator import Emulator  # noqa: E402

COLUMNS, LINES = 80, 24
MIB = 1024 * 1024
MEMORY_HISTORY_LINES = 10_000
_WORDS = "the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet build test ok".split()


def _words(rng: random.Random, width: int) -> str:
    out: list[str] = []
    size = 0
    while size < width:
        word = rng.choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:width]


def plain_corpus(size: int, rng: random.Random) -> bytes:
    """Log-like lines, 0..120 columns (some wrap at 80)."""
    parts: list[str] = []
    total = 0
    while total < size:
        line = f"{total:08d} " + _words(rng, rng.randint(0, 110)) + "\r\n"
        parts.append(line)
        total += len(line)
    return "".join(parts).encode()


def coloured_corpus(size: int, rng: random.Random) -> bytes:
    """`ls --color`/compiler-like lines: 16, 256 and truecolour SGR, bold, resets."""
    styles = ["\x1b[01;34m", "\x1b[32m", "\x1b[1;31m", "\x1b[38;5;208m", "\x1b[38;2;90;200;250m", "\x1b[4m"]
    parts: list[str] = []
    total = 0
    while total < size:
        line = "".join(
            f"{rng.choice(styles)}{_words(rng, rng.randint(3, 14))}\x1b[0m " for _ in range(rng.randint(1, 5))
        ) + "\r\n"
        parts.append(line)
        total += len(line)
    return "".join(parts).encode()


def tui_corpus(size: int, rng: random.Random) -> bytes:
    """Agent-TUI redraws: cursor moves, erase-line, box drawing, a spinner line redrawn."""
    spinner = "✻✽✶✳✢·"
    parts: list[str] = []
    total = 0
    frame = 0
    while total < size:
        chunk = ["\x1b[?25l"]
        for row in range(rng.randint(3, 10)):
            y = rng.randint(1, LINES - 4)
            text = _words(rng, rng.randint(10, 70))
            chunk.append(f"\x1b[{y};1H\x1b[2K\x1b[38;5;{rng.randint(0, 255)}m⏺\x1b[0m {text}")
        chunk.append(f"\x1b[{LINES - 2};1H╭" + "─" * (COLUMNS - 2) + "╮")
        chunk.append(f"\x1b[{LINES - 1};1H│ > \x1b[K\x1b[{LINES - 1};{COLUMNS}H│")
        for _ in range(5):
            frame += 1
            chunk.append(
                f"\x1b[{LINES - 3};1H\r\x1b[K\x1b[38;5;174m{spinner[frame % len(spinner)]}\x1b[0m "
                f"Gusting… \x1b[2m({frame // 10}s · ↓ {frame * 7 % 9000} tokens)\x1b[0m"
            )
        chunk.append(f"\x1b[{LINES - 1};5H\x1b[?25h")
        text = "".join(chunk)
        parts.append(text)
        total += len(text.encode())
    return "".join(parts).encode()


def daemon_corpus(name: str, size: int) -> bytes:
    """Corpus `name` of benchmarks/_corpora.py as a pane reads it (the tty turns LF into CRLF)."""
    with tempfile.TemporaryDirectory() as directory:
        corpus = write_corpus(name, Path(directory), size)
        return corpus.path.read_bytes().replace(b"\n", b"\r\n")


def cpu_seconds(run: Callable[[], None]) -> float:
    gc.collect()
    start = time.process_time()
    run()
    return time.process_time() - start


def feed_pyte(data: bytes, screen: pyte.Screen) -> Callable[[], None]:
    def run() -> None:
        stream = pyte.ByteStream(screen)
        for offset in range(0, len(data), PTY_READ_CHUNK_BYTES):
            stream.feed(data[offset : offset + PTY_READ_CHUNK_BYTES])

    return run


def feed_muxd(data: bytes, emulator: Emulator) -> Callable[[], None]:
    def run() -> None:
        for offset in range(0, len(data), PTY_READ_CHUNK_BYTES):
            emulator.feed(data[offset : offset + PTY_READ_CHUNK_BYTES])
        emulator.display_lines()  # include flushing deferred output

    return run


def throughput(corpora: dict[str, bytes], baseline_bytes: int) -> None:
    print(f"Throughput ({COLUMNS}x{LINES}, fed in {PTY_READ_CHUNK_BYTES // 1024} KiB chunks; CPU time)")
    header = f"{'corpus':<13} {'engine':<24} {'MB':>6} {'CPU s':>7} {'MB/s':>8}"
    print(header)
    print("-" * len(header))
    for name, data in corpora.items():
        slice_ = data[:baseline_bytes]
        results: dict[str, float] = {}
        engines: list[tuple[str, bytes, Callable[[], None]]] = [
            ("pyte Screen", slice_, feed_pyte(slice_, pyte.Screen(COLUMNS, LINES))),
            ("pyte HistoryScreen", slice_, feed_pyte(slice_, pyte.HistoryScreen(COLUMNS, LINES, history=10_000))),
            ("muxd Emulator", data, feed_muxd(data, Emulator(COLUMNS, LINES))),
            ("muxd (fast paths off)", slice_, feed_muxd(slice_, Emulator(COLUMNS, LINES, fast_paths=False))),
        ]
        for engine, payload, run in engines:
            seconds = cpu_seconds(run)
            rate = len(payload) / MIB / max(seconds, 1e-9)
            results[engine] = rate
            print(f"{name:<13} {engine:<24} {len(payload) / MIB:>6.1f} {seconds:>7.2f} {rate:>8.1f}")
        print(
            f"{name:<13} ratio muxd/pyte Screen = {results['muxd Emulator'] / results['pyte Screen']:.1f}x, "
            f"muxd/HistoryScreen = {results['muxd Emulator'] / results['pyte HistoryScreen']:.1f}x"
        )
    print(f"(pyte and 'fast paths off' ran on the first {baseline_bytes / MIB:.1f} MB of each corpus)\n")


def traced_bytes(build: Callable[[], object]) -> tuple[int, object]:
    gc.collect()
    tracemalloc.start()
    keep = build()
    gc.collect()
    size, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return size, keep


def history_lines(count: int, rng: random.Random, coloured: bool, separator: str = " ") -> bytes:
    """`count` scrollback lines (plus a screenful) of 79 columns; a BEL in the separator
    defeats flood skipping, so every row is emulated and stored as a compact row."""
    lines = []
    for n in range(count + LINES):
        text = _words(rng, COLUMNS - 7).ljust(COLUMNS - 7, ".")
        lines.append(f"{n:05d}{separator}\x1b[3{n % 8}m{text}\x1b[0m" if coloured else f"{n:05d}{separator}{text}")
    return ("\r\n".join(lines) + "\r\n").encode()


def tmux_history_bytes(data: bytes) -> int | None:
    """RSS growth of a tmux server whose 80x24 pane prints `data` (10k-line history)."""
    if shutil.which("tmux") is None:
        return None
    socket = f"muxd-bench-{os.getpid()}"
    with tempfile.NamedTemporaryFile(delete=False) as handle:
        handle.write(data)
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    try:
        subprocess.run([*tmux, "new-session", "-d", "-x", str(COLUMNS), "-y", str(LINES), "sleep 60"], check=True)
        subprocess.run([*tmux, "set", "-g", "history-limit", str(MEMORY_HISTORY_LINES)], check=True)
        pid = int(subprocess.run([*tmux, "display", "-p", "#{pid}"], capture_output=True, text=True).stdout)
        subprocess.run([*tmux, "new-window", "-d", "sleep 60"], check=True)
        time.sleep(0.3)
        before = _rss_bytes(pid)
        subprocess.run([*tmux, "new-window", "-d", f"cat {handle.name}; sleep 60"], check=True)
        for _ in range(100):
            time.sleep(0.1)
            out = subprocess.run([*tmux, "display", "-p", "-t", ":2", "#{history_size}"], capture_output=True, text=True)
            if out.stdout.strip() == str(MEMORY_HISTORY_LINES):
                break
        return _rss_bytes(pid) - before
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        os.unlink(handle.name)


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def memory(rng: random.Random) -> None:
    print(f"Memory of {MEMORY_HISTORY_LINES} lines of {COLUMNS}-column scrollback")
    for coloured in (False, True):
        data = history_lines(MEMORY_HISTORY_LINES, rng, coloured)
        label = "coloured" if coloured else "plain"

        unskippable = history_lines(MEMORY_HISTORY_LINES, random.Random(1), coloured, separator="\x07 ")

        def emulator(payload: bytes) -> Callable[[], object]:
            def build() -> object:
                emu = Emulator(COLUMNS, LINES)
                emu.feed(payload)
                emu.display_lines()
                return emu

            return build

        def history() -> object:
            screen = pyte.HistoryScreen(COLUMNS, LINES, history=MEMORY_HISTORY_LINES)
            pyte.ByteStream(screen).feed(data)
            return screen

        muxd_fast, emu = traced_bytes(emulator(data))
        muxd_full, _ = traced_bytes(emulator(unskippable))
        pyte_size, _ = traced_bytes(history)
        tmux_size = tmux_history_bytes(data)
        print(
            f"  {label:<8} muxd (flood-skipped) {muxd_fast / MIB:6.2f} MiB   muxd (emulated rows) "
            f"{muxd_full / MIB:6.2f} MiB   pyte HistoryScreen {pyte_size / MIB:6.2f} MiB"
            + (f"   tmux RSS growth {tmux_size / MIB:6.2f} MiB" if tmux_size is not None else "")
        )
        assert isinstance(emu, Emulator)
        print(f"  {'':<8} (history_size {emu.history_size}; HistoryScreen/muxd = {pyte_size / max(muxd_full, 1):.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size in MiB")
    parser.add_argument("--baseline-mb", type=float, default=1.0, help="slice fed to pyte baselines, MiB")
    args = parser.parse_args()
    rng = random.Random(1234)
    size = int(args.mb * MIB)
    corpora = {
        "plain": plain_corpus(size, rng),
        "coloured": coloured_corpus(size, rng),
        "tui": tui_corpus(size, rng),
        **{f"daemon-{name}": daemon_corpus(name, size) for name in ("plain", "colour", "tui")},
    }
    throughput(corpora, int(args.baseline_mb * MIB))
    memory(rng)


if __name__ == "__main__":
    main()
