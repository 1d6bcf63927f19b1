"""Scrollback: byte cap, eviction order, compact memory (compared with tmux's ~3-4 MB/10k lines)."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from muxd.config import DEFAULT_SCROLLBACK_BYTES, PTY_READ_CHUNK_BYTES
from muxd.emulator import Emulator
from muxd.emulator.rows import EMPTY_ROW, ROW_OVERHEAD_BYTES, Row

# tmux holds 10k lines of 80 columns in ~3-4 MB (measured by benchmarks/bench_emulator.py);
# the emulator must stay within three times that.
TMUX_10K_LINES_BYTES = 4 * 1024 * 1024
MEMORY_FACTOR_LIMIT = 3


@pytest.fixture(params=[True, False], ids=["fast", "plain"])
def fast(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def numbered(count: int, width: int = 10) -> bytes:
    return b"".join(b"%0*d\r\n" % (width, n) for n in range(count))


def test_default_cap_is_the_configured_one() -> None:
    assert Emulator()._scrollback.cap_bytes == DEFAULT_SCROLLBACK_BYTES


def test_row_size_is_its_utf8_text_plus_the_overhead() -> None:
    assert Row("abc", (), False).size_bytes == ROW_OVERHEAD_BYTES + 3
    assert EMPTY_ROW.size_bytes == ROW_OVERHEAD_BYTES
    assert Row("é中😀", (), False).size_bytes == ROW_OVERHEAD_BYTES + 2 + 3 + 4


NUMBERED_ROW_BYTES = ROW_OVERHEAD_BYTES + 10


@pytest.mark.parametrize("rows_fitting", [0, 0.1, 0.9, 1, 1.1, 5.3, 100])
def test_cap_evicts_oldest_rows_first(fast: bool, rows_fitting: float) -> None:
    cap = int(rows_fitting * NUMBERED_ROW_BYTES)
    em = Emulator(20, 3, scrollback_bytes=cap, fast_paths=fast)
    em.feed(numbered(300))
    # 298 rows of 10 characters scrolled off; the newest that fit in `cap` remain.
    kept = min(cap // NUMBERED_ROW_BYTES, 298)
    assert em.history_size == kept
    assert em.history_bytes == kept * NUMBERED_ROW_BYTES <= cap
    if kept:
        expected = "".join("%010d\n" % n for n in range(298 - kept, 298))
        assert em.capture(-(10**9), -1) == expected


def test_rows_are_sized_by_their_written_cells(fast: bool) -> None:
    em = Emulator(10, 2, scrollback_bytes=10**6, fast_paths=fast)
    em.feed(b"\r\nabc\r\n" + b"x" * 25 + b"\r\n" + b"\x1b[5Cz\r\n")
    # "", "abc", 10 x, 10 x, 5 x scroll off; "z" after 5 skipped cells stays on screen.
    assert em.history_size == 5
    assert em.history_bytes == 5 * ROW_OVERHEAD_BYTES + 0 + 3 + 10 + 10 + 5
    em.feed(b"\r\n")
    assert em.history_bytes == 6 * ROW_OVERHEAD_BYTES + 0 + 3 + 10 + 10 + 5 + 6  # a gap counts as written up to "z"


def test_an_erased_row_costs_only_what_is_written_after(fast: bool) -> None:
    # TUIs erase each row before redrawing it: erased cells hold nothing, so a short row keeps
    # a short history entry; an erase with a background colour does paint every cell.
    em = Emulator(120, 10, scrollback_bytes=10**6, fast_paths=fast)
    em.feed(b"\x1b[2Kabc\r\n" * 20 + b"ab\x1b[K\r\n" + b"\x1b[41m\x1b[2Kred\x1b[0m\r\n")
    em.feed(b"\r\n" * 10)
    assert em.history_size == 22 + 10 - 9
    assert em.history_bytes == 23 * ROW_OVERHEAD_BYTES + 20 * 3 + 2 + 120 + 0
    assert em.capture(-(10**9), -1).splitlines()[:22] == ["abc"] * 20 + ["ab", "red"]


def test_erase_saved_lines_clears_scrollback(fast: bool) -> None:
    em = Emulator(20, 3, fast_paths=fast)
    em.feed(numbered(50))
    assert em.history_size == 48
    em.feed(b"\x1b[3J")
    assert em.history_size == 0 and em.history_bytes == 0
    assert em.display_lines()[0] == "0000000048"


def test_scroll_region_top_rows_go_to_scrollback_like_tmux(fast: bool) -> None:
    em = Emulator(20, 5, fast_paths=fast)
    em.feed(b"top\r\n" + b"\x1b[2;4r\x1b[4;1H" + b"a\r\nb\r\nc\r\n")
    assert em.capture(-(10**9), -1) == "\n\na\n"  # the region's top row each time
    assert em.display_lines() == ["top", "b", "c", "", ""]


def test_flood_keeps_only_what_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    em = Emulator(80, 24, scrollback_bytes=100_000)
    data = numbered(200_000, width=40)  # ~8 MB, 40 characters per row
    for offset in range(0, len(data), 65536):
        em.feed(data[offset : offset + 65536])
    assert em.skipped_chars > len(data) * 0.9
    assert em.history_size == 100_000 // (ROW_OVERHEAD_BYTES + 40)
    lines = em.capture(-(10**9)).splitlines()
    assert lines[-2] == "%040d" % 199_999
    assert lines[-25] == "%040d" % (199_999 - 23)  # the newest scrollback row
    assert lines[0] == "%040d" % (199_999 - 23 - em.history_size + 1)


def _traced_bytes(data: bytes, cap: int = DEFAULT_SCROLLBACK_BYTES) -> tuple[int, Emulator]:
    """Memory an Emulator(80, 24) holds after `data`, fed as the daemon reads a PTY."""
    gc.collect()
    tracemalloc.start()
    em = Emulator(80, 24, scrollback_bytes=cap)
    for offset in range(0, len(data), PTY_READ_CHUNK_BYTES):
        em.feed(data[offset : offset + PTY_READ_CHUNK_BYTES])
    em.display_lines()
    gc.collect()
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return size, em


@pytest.mark.parametrize("coloured", [False, True], ids=["plain", "coloured"])
@pytest.mark.parametrize("flood", [True, False], ids=["flood_skipped", "emulated_rows"])
def test_memory_of_10k_lines_is_within_three_times_tmux(flood: bool, coloured: bool) -> None:
    # A BEL is not "simple" output, so it makes every row go through emulation.
    text = "".join(
        (f"\x1b[3{n % 8}m{n:05d}\x1b[0m" if coloured else f"{n:05d}")
        + (" " if flood else "\x07 ")
        + "lorem ipsum dolor " * 3
        + "sit amet, consecte\r\n"
        for n in range(10_024)
    )
    size, em = _traced_bytes(text.encode())
    assert (em.skipped_chars > 0) == flood
    assert em.history_size == 10_001
    assert em.capture(-1, -1).rstrip("\n").endswith("consecte")
    assert size < MEMORY_FACTOR_LIMIT * TMUX_10K_LINES_BYTES, f"{size / 2**20:.1f} MiB"


# A row of two characters, again and again: the flood that grew a pane to 541 MB while its
# 8 MiB cap counted 3 bytes a row. Plain and bold lines take the flood-skipping path; an
# erase-line makes every row go through emulation. SGR sequences that leave no trace in the
# row (here 60 resets) must not be held either.
SHORT_ROWS = {
    "plain_flood_skipped": (b"ab\r\n", True),
    "bold_flood_skipped": (b"\x1b[1mab\x1b[0m\r\n", True),
    "erased_emulated": (b"ab\x1b[K\r\n", False),
    "bold_erased_emulated": (b"\x1b[1mab\x1b[0m\x1b[K\r\n", False),
    "resets_flood_skipped": (b"\x1b[m" * 60 + b"ab\r\n", True),
}
SHORT_ROW_CAP_BYTES = 256 * 1024
SHORT_ROW_FLOOD_ROWS = 20_000  # fills that cap more than twice over
# Besides the cap: the newest rows not packed yet, the evicted part of the oldest segment.
SCROLLBACK_SLACK_BYTES = 64 * 1024


@pytest.mark.parametrize("case", SHORT_ROWS)
def test_short_rows_hold_no_more_memory_than_the_cap(case: str) -> None:
    line, flood_skipped = SHORT_ROWS[case]
    _traced_bytes(line * 2000, SHORT_ROW_CAP_BYTES)  # warm the shared caches (styles, regexes)
    screen_only, _ = _traced_bytes(line * 23, SHORT_ROW_CAP_BYTES)
    size, em = _traced_bytes(line * SHORT_ROW_FLOOD_ROWS, SHORT_ROW_CAP_BYTES)
    assert (em.skipped_chars > 0) == flood_skipped
    held = size - screen_only
    assert held < SHORT_ROW_CAP_BYTES + SCROLLBACK_SLACK_BYTES, f"{held / 2**20:.2f} MiB for a {SHORT_ROW_CAP_BYTES >> 10} KiB cap"
    assert 0 < em.history_size < SHORT_ROW_FLOOD_ROWS  # the cap was reached: rows were evicted
    assert SHORT_ROW_CAP_BYTES - 100 < em.history_bytes <= SHORT_ROW_CAP_BYTES


@pytest.mark.parametrize("seed", range(20))
def test_flood_lines_end_where_their_text_says(seed: int) -> None:
    """FloodLines.end_of finds a block's cut without splitting the text (a guess from the mean
    line length, corrected): it must land where the lines' own lengths say, for any slice."""
    import random

    from muxd.emulator.source_block import measure_lines

    rng = random.Random(seed)
    lines = ["x" * rng.choice([0, 1, 5, 40, 200]) + rng.choice(["", "\x1b[1m", "\x1b[0m"])
             for _ in range(rng.randint(1, 60))]
    text = "".join(line + "\r\n" for line in lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 2)
    for first in range(len(lines)):
        for stop in range(first, len(lines) + 1):
            flood = measure_lines(text, True, 80)  # its lines not split yet
            assert flood.end_of(first, stop, starts[first]) == starts[stop]
