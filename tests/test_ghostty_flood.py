"""The native flood skipper finds its candidate runs by probing, not by scanning every line: the
probe must find exactly the stretches a scan would."""

from __future__ import annotations

import random
import re

import pytest

from muxd.emulator.flood_text import _SIMPLE_CHARS, FLOOD_MIN_CHARS
from muxd.emulator.ghostty_flood import long_stretches

# What simple lines cannot hold: a character outside their set, or an escape other than SGR
# (and erase to the end of the line, which the native skipper sees to).
UNSIMPLE = {tabs: re.compile("[^" + ("\t" if tabs else "") + _SIMPLE_CHARS + r"]|\x1b(?!\[[0-9;]*m|\[K)")
            for tabs in (False, True)}

PIECES = ["word ", "\r\n", "\x1b[1;31m", "\x1b[0m", "é中", "\t", "\x1b[K"]
BAD = ["\x1b[H", "\x1b[2K", "\x07", "\x1b]0;t\x07", "\x08", "\x1b"]


def scanned(text: str, tabs: bool) -> list[tuple[int, int]]:
    """The stretches by brute force: between every two unsimple characters."""
    edges = [0] + [position for m in UNSIMPLE[tabs].finditer(text) for position in (m.start(), m.end())]
    edges.append(len(text))
    pairs = zip(edges[::2], edges[1::2])
    return [(start, end) for start, end in pairs if end - start >= FLOOD_MIN_CHARS]


@pytest.mark.parametrize("seed", range(40))
def test_probing_finds_what_a_scan_finds(seed: int) -> None:
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randint(1, 12)):
        # stretches around the threshold, split by one bad thing (or a cut SGR at the very end)
        size = rng.choice([10, FLOOD_MIN_CHARS - 1, FLOOD_MIN_CHARS, FLOOD_MIN_CHARS + 1, 3 * FLOOD_MIN_CHARS])
        chunk = ""
        while len(chunk) < size:
            chunk += rng.choice(PIECES)
        parts.append(chunk[:size] if rng.random() < 0.5 else chunk)
        parts.append(rng.choice(BAD) * rng.randint(1, 3))
    text = "".join(parts[:-1] if rng.random() < 0.5 else parts)
    for tabs in (False, True):
        assert list(long_stretches(text, tabs)) == scanned(text, tabs)


def test_agent_output_full_of_cursor_moves_has_no_stretch() -> None:
    text = "".join(f"\x1b[{n % 40 + 1};1H\x1b[2Kline {n} of a redraw" for n in range(5000))
    assert list(long_stretches(text, True)) == []
