"""The fast paths (tokenizer, run drawing, flood skipping) change nothing: proof by comparison.

Every case feeds the same bytes to an `Emulator` with fast paths and to one without
(pyte's parser, per-character drawing, no flood skipping), and compares everything a caller
can see: full captures (plain, with escapes, joined), cursor, history size, title, bells,
alternate screen. Flood skipping normally needs 4 KiB runs; most cases lower that threshold
so that short inputs take the skipping path too, and assert that it did.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import pytest

from emulator_data import streams
from muxd.emulator import Emulator, flood

ALL_HISTORY = -(10**9)


@pytest.fixture(params=["small_flood_threshold", "default_threshold"])
def threshold(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    if request.param == "small_flood_threshold":
        monkeypatch.setattr(flood, "FLOOD_MIN_CHARS", 16)
    return flood.FLOOD_MIN_CHARS


def observe(emulator: Emulator) -> dict[str, object]:
    return {
        "capture": emulator.capture(ALL_HISTORY),
        "escapes": emulator.capture(ALL_HISTORY, escapes=True),
        "joined": emulator.capture(ALL_HISTORY, escapes=True, join_wrapped=True),
        "cursor": emulator.cursor,
        "history_size": emulator.history_size,
        "history_bytes": emulator.history_bytes,
        "title": emulator.title,
        "bell_count": emulator.bell_count,
        "alternate_screen": emulator.alternate_screen,
        "display": emulator.display_lines(),
    }


def pieces(data: bytes, cuts: Sequence[int]) -> Iterator[bytes]:
    previous = 0
    for cut in sorted(cuts):
        yield data[previous:cut]
        previous = cut
    yield data[previous:]


def run(data: bytes, cuts: Sequence[int], fast: bool, **size: int) -> Emulator:
    replies: list[bytes] = []
    emulator = Emulator(reply=replies.append, fast_paths=fast, **size)
    for piece in pieces(data, cuts):
        emulator.feed(piece)
    emulator.replies = replies  # type: ignore[attr-defined]
    return emulator


def assert_identical(data: bytes, cuts: Sequence[int] = (), **size: int) -> Emulator:
    reference = run(data, (), fast=False, **size)
    fast = run(data, cuts, fast=True, **size)
    expected, actual = observe(reference), observe(fast)
    history = fast.rows(ALL_HISTORY, -1) if fast.history_size else []
    assert len(history) == fast.history_size
    assert sum(len(row.text) + 1 for row in history) == fast.history_bytes
    for key in expected:
        assert actual[key] == expected[key], f"{key} differs (cuts={list(cuts)[:8]})"
    assert fast.replies == reference.replies  # type: ignore[attr-defined]
    return fast


def chunked(data: bytes, size: int) -> list[int]:
    return list(range(size, len(data), size))


FLOOD_CASES = {
    "plain": lambda rng: streams.plain_flood(rng, 400),
    "coloured": lambda rng: streams.coloured_flood(rng, 400),
    "wide": lambda rng: streams.wide_flood(rng, 60),
    "long_wrapped": lambda rng: streams.plain_flood(rng, 60, max_width=1000),
    "coloured_wrapped": lambda rng: streams.coloured_flood(rng, 80, max_width=900),
    # Attributes set before a flood and changed without full resets inside it.
    "sticky_sgr": lambda rng: b"\x1b[1;4;33m" + b"".join(
        (b"\x1b[0m\x1b[3%dm" % (n % 8) if n % 7 == 0 else b"\x1b[%dm" % rng.choice([1, 4, 22, 24, 7, 27, 45]))
        + streams.words(rng, rng.randint(0, 150)).encode() + b"\r\n"
        for n in range(300)
    ),
    "mixed": lambda rng: b"".join(
        [
            b"prompt$ cat file\r\n",
            streams.plain_flood(rng, 200),
            b"\x1b]0;my title\x07\x07\x1b[5;5Hmoved\x1b[K",
            streams.coloured_flood(rng, 200),
            b"\x1b[?1049h\x1b[2J\x1b[Halt screen\r\n" + streams.plain_flood(rng, 50) + b"\x1b[?1049l",
            streams.plain_flood(rng, 100),
            b"\x1b[6n\x1b[31mstill red",
            streams.plain_flood(rng, 100),
        ]
    ),
}


@pytest.mark.parametrize("case", FLOOD_CASES)
@pytest.mark.parametrize("chunk", [1 << 20, 4096, 997, 61])
def test_floods_match_plain_emulation(case: str, chunk: int, threshold: int) -> None:
    data = FLOOD_CASES[case](random.Random(case))
    fast = assert_identical(data, chunked(data, chunk))
    if threshold < 100 and case in ("plain", "coloured", "long_wrapped", "sticky_sgr", "mixed"):
        assert fast.skipped_chars > 0, "the flood path was not exercised"


@pytest.mark.parametrize("cap", [0, 1, 100, 997, 5_000, 40_000, 10**9])
@pytest.mark.parametrize("case", ["plain", "coloured", "coloured_wrapped", "sticky_sgr"])
def test_eviction_inside_source_blocks(case: str, cap: int, threshold: int) -> None:
    data = FLOOD_CASES[case](random.Random(case))
    for chunk in (1 << 20, 1500):
        fast = assert_identical(data, chunked(data, chunk), scrollback_bytes=cap)
        assert fast.history_size == 0 or cap > 0


def test_every_cap_alignment(threshold: int) -> None:
    """Eviction boundaries at every byte offset, through wrapped and coloured lines."""
    rng = random.Random(11)
    data = streams.coloured_flood(rng, 40, max_width=260) + streams.plain_flood(rng, 40, max_width=260)
    for cap in range(0, 700, 7):
        assert_identical(data, chunked(data, 700), columns=50, lines=3, scrollback_bytes=cap)


@pytest.mark.parametrize("columns,lines", [(80, 24), (37, 5), (10, 1), (2, 3), (200, 60)])
def test_sizes(columns: int, lines: int, threshold: int) -> None:
    rng = random.Random(columns * lines)
    data = streams.coloured_flood(rng, 150) + streams.wide_flood(rng, 10) + streams.plain_flood(rng, 150)
    assert_identical(data, chunked(data, 3000), columns=columns, lines=lines, scrollback_bytes=20_000)


def test_every_split_point(threshold: int) -> None:
    """A feed may end anywhere: inside UTF-8, inside every kind of escape sequence, in CRLF."""
    rng = random.Random(7)
    data = (
        b"head \xe4\xb8\xad\xf0\x9f\x98\x80 e\xcc\x81\r\n"
        + streams.coloured_flood(rng, 12, max_width=120)
        + b"\x1b]2;a title\x1b\\\x1b[38;2;1;2;3mX\x1b[0m\x1b[?1049hALT\x1b[?1049l\x1b(B\x1b7\x1b8\x1b[6n"
        + streams.plain_flood(rng, 12, max_width=120)
        + b"\x9b1m\x1b[>c\x1b]0;t\x07\x1b[2;3r\x1b[r\x1b[3Stail"
    )
    for cut in range(1, len(data)):
        assert_identical(data, [cut], columns=30, lines=4, scrollback_bytes=600)


@pytest.mark.parametrize("seed", range(12))
def test_random_streams(seed: int, threshold: int) -> None:
    rng = random.Random(seed)
    data = streams.random_stream(rng, 120)
    columns, lines = rng.choice([(80, 24), (40, 10), (13, 4)])
    cuts = sorted(rng.sample(range(1, len(data)), min(40, len(data) - 1)))
    assert_identical(data, cuts, columns=columns, lines=lines, scrollback_bytes=rng.choice([0, 500, 50_000]))


def test_resize_between_feeds(threshold: int) -> None:
    rng = random.Random(3)
    parts = [streams.coloured_flood(rng, 120), streams.tui_frames(rng, 20), streams.plain_flood(rng, 120)]
    sizes = [(50, 10), (80, 30), (20, 5)]
    emulators = [Emulator(fast_paths=fast, scrollback_bytes=30_000) for fast in (False, True)]
    for part, (columns, lines) in zip(parts, sizes):
        for emulator in emulators:
            emulator.feed(part)
            emulator.resize(columns, lines)
    reference, fast = (observe(emulator) for emulator in emulators)
    assert fast == reference


def test_line_longer_than_the_deferral_limit(threshold: int) -> None:
    rng = random.Random(13)
    line = streams.words(rng, flood.FLOOD_DEFER_MAX_CHARS + 5000).encode()
    data = streams.plain_flood(rng, 100) + line + b"\r\n" + streams.coloured_flood(rng, 100) + line
    fast = assert_identical(data, chunked(data, 4096))
    if threshold < 100:
        assert fast.skipped_chars > 0


def test_tui_redraws(threshold: int) -> None:
    data = streams.tui_frames(random.Random(5), 300)
    assert_identical(data, chunked(data, 1024))
