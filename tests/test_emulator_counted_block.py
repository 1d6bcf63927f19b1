"""Counted blocks (muxd/emulator/counted_block.py) hold flood lines exactly as measured source
blocks do: the same rows, costs, evictions and row numbers, for every cap and piece size."""

from __future__ import annotations

import random

import pytest

from emulator_data import streams
from muxd.emulator import counted_block, scrollback
from muxd.emulator.cell import BLANK
from muxd.emulator.counted_block import counted_piece
from muxd.emulator.scrollback import Scrollback
from muxd.emulator.source_block import advance_attrs

COLUMNS = 60


def grep_lines(rng: random.Random, lines: int) -> str:
    """Short coloured lines as `grep --color` writes them (less its erases), some plain."""
    out = []
    for _ in range(lines):
        name = streams.words(rng, rng.randint(0, 25))  # a line of SGR and text fits the pane
        tail = streams.words(rng, rng.randint(0, 20))
        out.append(f"\x1b[01;31m{name}\x1b[m:{tail}\r\n" if rng.random() < 0.8 else f"{tail}\r\n")
    return "".join(out)


def fill(text: str, cap: int, piece: int) -> Scrollback:
    """`text` appended to a store capped at `cap` in pieces of whole lines about `piece` long."""
    store = Scrollback(cap)
    attrs = BLANK
    position = 0
    while position < len(text):
        end = text.find("\r\n", position + piece)
        end = len(text) if end < 0 else end + 2
        part = text[position:end]
        has_sgr = "\x1b" in part
        end_attrs = advance_attrs(attrs, part, BLANK) if has_sgr else attrs
        store.append_source(part, has_sgr, COLUMNS, attrs, end_attrs, BLANK)
        position, attrs = end, end_attrs
    return store


def observed(store: Scrollback) -> tuple[object, ...]:
    return store.row_count, store.size_bytes, store.rows_added, store.rows(0, store.row_count)


@pytest.mark.parametrize("cap", [0, 1, 150, 997, 4_000, 12_345, 10**9])
@pytest.mark.parametrize("piece", [1, 300, 5_000])
def test_counted_blocks_keep_what_measured_blocks_keep(cap: int, piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counted_block, "COUNTED_BLOCK_CHARS", 700)  # many block boundaries
    rng = random.Random(cap * 7 + piece)
    text = grep_lines(rng, 400)
    counted = fill(text, cap, piece)
    assert any(isinstance(segment, counted_block.CountedBlock) for segment in counted._segments) or cap < 200
    monkeypatch.setattr(scrollback, "counted_piece", lambda *args: None)  # every line measured
    measured = fill(text, cap, piece)
    assert observed(counted) == observed(measured)


def test_rows_read_from_the_middle_of_a_block_are_the_same_rows() -> None:
    text = grep_lines(random.Random(3), 300)
    store = fill(text, 10**9, 10**6)
    every = store.rows(0, store.row_count)
    for first, stop in [(0, 1), (5, 9), (150, 300), (299, 300), (7, 7)]:
        assert store.rows(first, stop) == every[first:stop]


@pytest.mark.parametrize("text", [
    "a" * (COLUMNS + 1) + "\r\n",  # wider than the pane: it wraps
    "ok\r\n" + "b" * (COLUMNS + 1) + "\r\n",
    "tab\there\r\n",
    "wide 中\r\n",
    "\x1b[1m" + "".join(f"\x1b[{30 + n % 8};{40 + n % 8};{n}m" for n in range(9)) + "x\r\n",  # more kinds than counted
])
def test_lines_a_counted_block_cannot_hold_are_measured(text: str) -> None:
    assert counted_piece(text, "\x1b" in text, COLUMNS) is None


def test_a_line_as_wide_as_the_pane_is_counted() -> None:
    line = "\x1b[1m" + "c" * (COLUMNS - 4) + "\r\n"  # SGR included: at most COLUMNS characters
    assert counted_piece(line * 3, True, COLUMNS) is not None


def test_every_cap_alignment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eviction boundaries at many offsets into lines and blocks."""
    monkeypatch.setattr(counted_block, "COUNTED_BLOCK_CHARS", 500)
    text = grep_lines(random.Random(5), 200)
    caps = range(0, 4000, 37)
    counted = [observed(fill(text, cap, 900)) for cap in caps]
    monkeypatch.setattr(scrollback, "counted_piece", lambda *args: None)
    assert counted == [observed(fill(text, cap, 900)) for cap in caps]


def test_lines_of_very_mixed_lengths_are_found_and_evicted_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    # Short lines, then long ones: a line end guessed from the mean length is hundreds of lines off.
    text = "".join(f"\x1b[1m{n}\x1b[m\r\n" for n in range(600)) + "".join(
        f"\x1b[1m{n:050d}\x1b[m\r\n" for n in range(600))
    caps = [0, 500, 9_999, 30_000, 52_345]
    counted = [observed(fill(text, cap, 10**6)) for cap in caps]
    every = fill(text, 10**9, 10**6)
    assert isinstance(every._segments[0], counted_block.CountedBlock)
    assert every.rows(700, 702) == every.rows(0, every.row_count)[700:702]
    monkeypatch.setattr(scrollback, "counted_piece", lambda *args: None)
    assert counted == [observed(fill(text, cap, 10**6)) for cap in caps]
