"""Fuzz cases for the emulator: the bytes of one case and the steps that feed and read them.

A case is what one pane's emulator lives through: created at a random size and scrollback
cap, fed its bytes in random-sized pieces (from one byte, which splits every sequence, to the
daemon's largest emulation slice), with the daemon's reads and occasional resizes in between.
Everything comes from a `random.Random` seeded with (run seed, case number), and no step
depends on what the emulator answered, so a case is the same on every backend and every
run: `FuzzCase.describe` / `save` give a reproducer as bytes plus a list of steps.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from muxd.config import (
    CAPTURE_MAX_LINES, DEFAULT_SCROLLBACK_BYTES, EMULATION_SLICE_MAX_BYTES, EMULATION_SLICE_MIN_BYTES,
    MAX_COLUMNS, MAX_LINES, MIN_COLUMNS, MIN_LINES,
)

from muxd.detectors.replay import read_recording

from .emulator_fuzz_inputs import escape_soup, mutate_bytes, mutate_sequences, random_bytes, tokens

CASE_MIN_BYTES = 64 * 1024
CASE_MAX_BYTES = 1024 * 1024
SCROLLBACK_CAPS_BYTES = (64 * 1024, 256 * 1024, DEFAULT_SCROLLBACK_BYTES)
RESIZE_CHANCE = 0.01  # per piece fed
# A screen this big (1000x1000 at most) is read only in small spans: ghostty reads a million
# cells through cffi in ~1.6 s, and the daemon would not capture it whole at 10 Hz either.
BIG_SCREEN_CELLS = 50_000
BIG_SCREEN_SPAN_ROWS = 64
# How far into scrollback a capture usually reaches; a whole-history capture is rare.
HISTORY_REACH_ROWS = 300
WHOLE_HISTORY_CHANCE = 0.02

KINDS = ("random", "soup", "mutated-bytes", "mutated-sequences")
KIND_WEIGHTS = (15, 35, 25, 25)

# Reads the daemon does (name, weight); their arguments are drawn by `_read_args`.
READS = (("display_lines", 20), ("changed_rows", 10), ("capture", 15), ("rows", 5), ("span", 3),
         ("row_cells", 8), ("cursor", 8), ("cursor_visible", 2), ("private_modes", 5), ("title", 5),
         ("alternate_screen", 3), ("history", 6), ("bell_count", 1), ("agreement", 2))
READ_NAMES = tuple(name for name, _ in READS)
READ_WEIGHTS = tuple(weight for _, weight in READS)


class Step(NamedTuple):
    op: str       # "feed", "resize" or a read's name
    args: tuple   # feed: (start, end) in the case's bytes; resize: (columns, lines); a read: its own


@dataclass
class FuzzCase:
    seed: int
    number: int
    kind: str
    columns: int
    lines: int
    scrollback_bytes: int
    data: bytes
    steps: list[Step] = field(default_factory=list)

    def describe(self) -> str:
        return (f"seed {self.seed} case {self.number} ({self.kind}, {len(self.data)} bytes, "
                f"{self.columns}x{self.lines}, scrollback {self.scrollback_bytes})")

    def save(self, directory: Path) -> tuple[Path, Path]:
        """Write the case's bytes and its steps (JSON lines) into `directory`: a reproducer."""
        directory.mkdir(parents=True, exist_ok=True)
        stem = f"seed{self.seed}-case{self.number}"
        data_path, steps_path = directory / f"{stem}.bin", directory / f"{stem}.steps.jsonl"
        data_path.write_bytes(self.data)
        with steps_path.open("w") as fh:
            fh.write(json.dumps({"new_emulator": [self.columns, self.lines, self.scrollback_bytes]}) + "\n")
            for step in self.steps:
                fh.write(json.dumps([step.op, list(step.args)]) + "\n")
        return data_path, steps_path


class RealOutput:
    """Real agent output to mutate: whole logs, and the same cut into sequences and lines."""

    def __init__(self, logs: list[bytes]) -> None:
        self.logs = [log for log in logs if log]
        self.tokens = [token for log in self.logs for token in tokens(log)]

    @classmethod
    def load(cls, paths: list[Path]) -> RealOutput:
        """Raw byte logs, or asciicast recordings (gzipped or not), read as `muxd replay` reads them."""
        return cls([b"".join(data for _, data in read_recording(path).events) for path in paths])


def make_case(seed: int, number: int, real: RealOutput) -> FuzzCase:
    rng = random.Random(f"muxd-emulator-fuzz-{seed}-{number}")
    kinds = KINDS if real.logs else KINDS[:2]
    kind = rng.choices(kinds, KIND_WEIGHTS[:len(kinds)])[0]
    size = rng.randint(CASE_MIN_BYTES, CASE_MAX_BYTES)
    if kind == "random":
        data = random_bytes(rng, size)
    elif kind == "soup":
        data = escape_soup(rng, size)
    elif kind == "mutated-bytes":
        data = mutate_bytes(rng, rng.choice(real.logs), size)
    else:
        data = mutate_sequences(rng, real.tokens, size)
    columns, lines = _size(rng, typical=True)
    case = FuzzCase(seed, number, kind, columns, lines, rng.choice(SCROLLBACK_CAPS_BYTES), data)
    case.steps = _plan(rng, len(data), columns, lines)
    return case


def clamp_size(columns: int, lines: int) -> tuple[int, int]:
    return min(max(columns, MIN_COLUMNS), MAX_COLUMNS), min(max(lines, MIN_LINES), MAX_LINES)


def _size(rng: random.Random, *, typical: bool = False) -> tuple[int, int]:
    """A pane size: usually an ordinary one; else tiny, huge in one direction, the limits, or out
    of range (the emulator clamps, as the daemon's resize would have refused)."""
    roll = 0.0 if typical else rng.random()
    if roll < 0.6:
        return rng.randint(20, 250), rng.randint(5, 80)
    if roll < 0.75:
        return rng.randint(MIN_COLUMNS, 10), rng.randint(MIN_LINES, 4)
    if roll < 0.85:
        return MAX_COLUMNS, rng.randint(MIN_LINES, 30)
    if roll < 0.93:
        return rng.randint(MIN_COLUMNS, 40), MAX_LINES
    if roll < 0.97:
        return rng.choice(((MAX_COLUMNS, MAX_LINES), (MIN_COLUMNS, MIN_LINES), (MIN_COLUMNS, MAX_LINES)))
    return rng.choice((0, -1, MAX_COLUMNS + 1, 10**9)), rng.choice((0, -5, MAX_LINES + 1, 10**9))


def _piece_size(rng: random.Random) -> int:
    """Tiny reads (a sequence split across them), ordinary ones, and the daemon's slice sizes."""
    roll = rng.random()
    if roll < 0.2:
        return rng.randint(1, 16)
    if roll < 0.5:
        return rng.randint(17, EMULATION_SLICE_MIN_BYTES)
    return rng.randint(EMULATION_SLICE_MIN_BYTES, EMULATION_SLICE_MAX_BYTES)


def _plan(rng: random.Random, total: int, columns: int, lines: int) -> list[Step]:
    steps: list[Step] = []
    position = 0
    columns, lines = clamp_size(columns, lines)
    while position < total:
        end = min(total, position + _piece_size(rng))
        steps.append(Step("feed", (position, end)))
        position = end
        roll = rng.random()
        reads = 0 if roll < 0.5 else 1 if roll < 0.85 else rng.randint(2, 4)
        for _ in range(reads):
            name = rng.choices(READ_NAMES, READ_WEIGHTS)[0]
            steps.append(Step(name, _read_args(rng, name, columns, lines)))
        if rng.random() < RESIZE_CHANCE:
            asked = _size(rng)
            steps.append(Step("resize", asked))
            columns, lines = clamp_size(*asked)
    # Every read once at the end, at an ordinary size, so each case checks every invariant.
    asked = _size(rng, typical=True)
    steps.append(Step("resize", asked))
    columns, lines = clamp_size(*asked)
    steps.extend(Step(name, _read_args(rng, name, columns, lines)) for name in READ_NAMES)
    return steps


def _line_number(rng: random.Random, lines: int) -> int | None:
    roll = rng.random()
    if roll < 0.35:
        return None
    if roll < 0.7:
        return rng.randint(-50, lines + 5)
    if roll < 0.85:
        return -rng.randint(1, HISTORY_REACH_ROWS)
    return rng.choice((0, -1, lines - 1, lines, -CAPTURE_MAX_LINES, CAPTURE_MAX_LINES))


def _span_args(rng: random.Random, lines: int, big: bool) -> tuple[int | None, int | None]:
    if rng.random() < WHOLE_HISTORY_CHANCE and not big:
        return -CAPTURE_MAX_LINES, None  # capture-pane -S -
    if big:
        start = rng.randint(-HISTORY_REACH_ROWS, lines - 1)
        return start, start + rng.randint(0, BIG_SCREEN_SPAN_ROWS - 1)
    start, end = _line_number(rng, lines), _line_number(rng, lines)
    if start is not None and start < -HISTORY_REACH_ROWS and (end is None or end >= -HISTORY_REACH_ROWS):
        end = start + rng.randint(0, HISTORY_REACH_ROWS)  # a long reach back stays a short span
    return start, end


def _read_args(rng: random.Random, name: str, columns: int, lines: int) -> tuple:
    big = columns * lines > BIG_SCREEN_CELLS
    if name == "capture":
        return (*_span_args(rng, lines, big), rng.random() < 0.4, rng.random() < 0.3)
    if name in ("rows", "span"):
        return _span_args(rng, lines, big)
    if name == "row_cells":
        return (rng.randrange(lines),)
    if name == "changed_rows":
        return (rng.choice(("all", "last", "last")),)
    if name == "agreement":  # rows compared: a big screen only in part
        return (min(lines, BIG_SCREEN_SPAN_ROWS) if big else lines,)
    return ()
