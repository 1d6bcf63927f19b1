"""The bytes a terminal received, and when: `python -m muxd.testing.byte_stamps PATH` (the
command of tmux's `pipe-pane -O` on an outer terminal) appends what it reads on stdin to PATH
and, for each read, the wall-clock time and the size so far to PATH.times. `arrival(PATH,
needle)` then says when `needle` had fully arrived: an attached client's bell or OSC 9, as the
outer terminal got it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

READ_BYTES = 64 * 1024


def main(path: str) -> None:
    received = 0
    with open(path, "ab", buffering=0) as out, open(path + ".times", "a", buffering=1) as times:
        while True:
            chunk = os.read(0, READ_BYTES)
            now = time.time()
            if not chunk:
                return
            out.write(chunk)
            received += len(chunk)
            times.write(f"{now:.6f} {received}\n")


def received(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def arrival(path: Path, needle: bytes, start: int = 0) -> float | None:
    """The wall-clock time the first `needle` at or after offset `start` had fully arrived (None:
    not yet)."""
    found = received(path).find(needle, start)
    if found < 0:
        return None
    end = found + len(needle)
    times = Path(str(path) + ".times")
    for line in times.read_text().splitlines() if times.exists() else ():
        stamp, _, size = line.partition(" ")
        if size and int(size) >= end:
            return float(stamp)
    return None


if __name__ == "__main__":
    main(sys.argv[1])
