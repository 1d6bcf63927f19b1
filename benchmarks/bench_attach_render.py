"""The attach renderer's cost per frame: compose + paint, for the daemon's per-client render.

Usage: python benchmarks/bench_attach_render.py [--frames 300]

For client sizes 80x24 and 200x50 and layouts of one, two and four panes, the pane programs
write a frame's worth of output (then compose + paint run, timed; emulation is not counted):
- `one-row`: a clock-like program rewrites one row per frame;
- `top`: a `top`-like TUI redraws its whole screen every frame (header with changing figures,
  a process table re-sorted by changing CPU%, reverse-video column header);
- `full-churn`: every cell of the pane changes every frame (the worst case: a colour-cycling
  full-screen animation);
- `tui60`: the 60 Hz TUI of bench_attach.py (every row redrawn in a colour of its own, the
  text and colours moving each frame).
--backend picks the panes' emulator (default: the daemon's, libghostty-vt).
In multi-pane layouts the program runs in the first pane; the others hold static text.
Prints µs per frame (fastest of --repeat runs), frames/s that one core could render, and bytes painted per frame against
the bytes the pane program wrote that frame (ratio < 1: the client gets less than the program
wrote).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from muxd.attach import FramePainter, PaneView, StatusLine, WindowTab, compose  # noqa: E402
from muxd.emulator.backend import BACKENDS, DEFAULT_BACKEND, new_emulator  # noqa: E402

E = "\x1b"
SIZES = ((80, 24), (200, 50))
STATUS = StatusLine("bench", (WindowTab(0, "top", True), WindowTab(1, "bash", False, last=True)),
                    right="claude · Thinking 12s · 4.8k tok")


def one_row(columns: int, lines: int) -> Iterator[bytes]:
    """A clock on row 3: one row rewritten per frame."""
    n = 0
    while True:
        n += 1
        yield f"{E}[3;1H{E}[32mtick {n:>8} {time.strftime('%H:%M:%S')}{E}[0m{E}[K".encode()


def top_like(columns: int, lines: int) -> Iterator[bytes]:
    """A `top`-like screen redrawn whole every frame (only some figures really change)."""
    rng = random.Random(5)
    commands = ["python3", "node", "bash", "postgres", "claude", "codex", "rg", "git", "vim", "ssh", "tmux"]
    procs = [[1000 + i, rng.choice(commands), rng.random() * 5, rng.random() * 3] for i in range(200)]
    tick = 0
    while True:
        tick += 1
        for proc in procs:
            proc[2] = max(0.0, proc[2] + rng.uniform(-0.4, 0.4))
        procs.sort(key=lambda p: -p[2])
        out = [f"{E}[H"]
        out.append(f"top - 12:{tick // 60 % 60:02d}:{tick % 60:02d} up 3 days,  2 users,  load average: "
                   f"{rng.random():.2f}, 0.80, 0.75{E}[K\r\n")
        out.append(f"Tasks: {len(procs)} total,   {rng.randint(1, 4)} running{E}[K\r\n")
        out.append(f"%Cpu(s): {rng.random() * 20:4.1f} us,  {rng.random() * 5:4.1f} sy,  0.0 ni{E}[K\r\n")
        out.append(f"MiB Mem :  15928.4 total,   {rng.randint(2000, 3000)}.1 free{E}[K\r\n\r\n")
        header = "    PID USER      PR  NI    VIRT    RES  %CPU  %MEM COMMAND"
        out.append(f"{E}[7m{header.ljust(columns)[:columns]}{E}[0m\r\n")
        for proc in procs[: lines - 7]:
            line = f"{proc[0]:>7} user      20   0  {rng.randint(10, 999):>6}m  {rng.randint(1, 99):>4}m {proc[2]:5.1f} {proc[3]:5.1f} {proc[1]}"
            bold = f"{E}[1m" if proc[2] > 4 else ""
            out.append(f"{bold}{line[:columns]}{E}[0m{E}[K\r\n")
        out.append(f"{E}[J")
        yield "".join(out).encode()


def full_churn(columns: int, lines: int) -> Iterator[bytes]:
    """Every cell changes every frame: colour-cycling characters across the whole screen."""
    tick = 0
    while True:
        tick += 1
        out = [f"{E}[H"]
        for y in range(lines):
            colour = 16 + (tick + y) % 216
            char = chr(ord("a") + (tick + y) % 26)
            out.append(f"{E}[{y + 1};1H{E}[38;5;{colour}m{char * columns}")
        out.append(f"{E}[0m")
        yield "".join(out).encode()


def tui_60hz(columns: int, lines: int) -> Iterator[bytes]:
    """bench_attach.py's TUI: each row a line of text in a colour of its own, all moving."""
    frame = 0
    while True:
        out = [f"{E}[H"]
        for y in range(lines):
            colour = 16 + (frame + y) % 216
            text = f"row {y:3d} frame {frame:6d} " + "#" * ((frame + y) % max(1, columns - 30))
            out.append(f"{E}[38;5;{colour}m" + text[:columns].ljust(columns) + ("\r\n" if y < lines - 1 else ""))
        frame += 1
        yield "".join(out).encode()


PROGRAMS: dict[str, Callable[[int, int], Iterator[bytes]]] = {
    "one-row": one_row, "top": top_like, "full-churn": full_churn, "tui60": tui_60hz,
}


def layout(columns: int, lines: int, count: int) -> list[tuple[int, int, int, int]]:
    """Pane rectangles (x, y, columns, lines) like tmux's tiled splits of the window area."""
    area = lines - 1
    if count == 1:
        return [(0, 0, columns, area)]
    left = (columns - 1) // 2
    if count == 2:
        return [(0, 0, left, area), (left + 1, 0, columns - left - 1, area)]
    top = (area - 1) // 2
    return [(0, 0, left, top), (left + 1, 0, columns - left - 1, top),
            (0, top + 1, left, area - top - 1), (left + 1, top + 1, columns - left - 1, area - top - 1)]


def run(columns: int, lines: int, panes: int, program: str, frames: int, backend: str) -> tuple[float, float, float]:
    rects = layout(columns, lines, panes)
    emulators = [new_emulator(w, h, backend=backend) for (_, _, w, h) in rects]
    for index, emulator in enumerate(emulators[1:], 1):
        emulator.feed("".join(f"static pane {index} line {n}\r\n" for n in range(emulator.lines - 1)).encode())
    views = [PaneView(e, x, y, w, h, active=i == 0) for i, (e, (x, y, w, h)) in enumerate(zip(emulators, rects))]
    painter = FramePainter()
    painter.paint(compose(columns, lines, views, STATUS))
    source = PROGRAMS[program](emulators[0].columns, emulators[0].lines)
    for _ in range(3):  # warm caches
        emulators[0].feed(next(source))
        painter.paint(compose(columns, lines, views, STATUS))
    written = painted = 0
    spent = 0.0
    for _ in range(frames):
        data = next(source)
        written += len(data)
        emulators[0].feed(data)
        emulators[0].cursor  # flush deferred emulation outside the timed part
        start = time.thread_time()  # CPU time: the machine may be shared
        out = painter.paint(compose(columns, lines, views, STATUS))
        spent += time.thread_time() - start
        painted += len(out)
    return spent / frames * 1e6, painted / frames, painted / max(written, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the fastest is shown")
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND, help="the panes' emulator")
    args = parser.parse_args()
    print(f"{'client':>8} {'panes':>5} {'program':>10} {'µs/frame':>9} {'frames/s':>9} "
          f"{'bytes/frame':>11} {'painted/written':>15}")
    for columns, lines in SIZES:
        for panes in (1, 2, 4):
            for program in PROGRAMS:
                # The fastest run: on a shared machine the others mostly measure the neighbours.
                micros, per_frame, ratio = min(
                    run(columns, lines, panes, program, args.frames, args.backend) for _ in range(max(args.repeat, 1))
                )
                print(f"{columns:>4}x{lines:<3} {panes:>5} {program:>10} {micros:>9.0f} {1e6 / micros:>9.0f} "
                      f"{per_frame:>11.0f} {ratio:>15.2f}")


if __name__ == "__main__":
    main()
