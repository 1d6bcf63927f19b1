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
from muxd.emulator import Emulator, counted_block, flood, scrollback, source_block

ALL_HISTORY = -(10**9)


def shrink_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scrollback segments of a few rows, so that short inputs cross their boundaries too."""
    monkeypatch.setattr(scrollback, "ROW_CHUNK_ROWS", 7)
    monkeypatch.setattr(scrollback, "ROW_CHUNK_BYTES", 400)
    monkeypatch.setattr(scrollback, "FLOOD_PIECE_CHARS", 500)
    monkeypatch.setattr(source_block, "SOURCE_BLOCK_LINES", 5)
    monkeypatch.setattr(source_block, "SOURCE_BLOCK_CHARS", 300)
    monkeypatch.setattr(counted_block, "COUNTED_BLOCK_CHARS", 300)


@pytest.fixture(params=["small_flood_threshold", "default_threshold"])
def threshold(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    if request.param == "small_flood_threshold":
        monkeypatch.setattr(flood, "FLOOD_MIN_CHARS", 16)
        shrink_segments(monkeypatch)
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
    assert sum(row.size_bytes for row in history) == fast.history_bytes
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
    # Lines whose SGR outweighs their text are rendered into rows, not held as source.
    "colour_per_character": lambda rng: b"".join(
        streams.words(rng, rng.randint(0, 12)).encode()  # in the colour the line before left
        + b"".join(b"\x1b[38;2;%d;%d;%dm%s" % (rng.randrange(256), rng.randrange(256), rng.randrange(256),
                                           rng.choice(streams.WORDS).encode()[:1]) for _ in range(rng.randint(0, 120)))
        + (b"\x1b[0m" * rng.randint(0, 40) + b"x" if rng.random() < 0.3 else b"") + b"\r\n"
        for _ in range(150)
    ),
    # Lines under DEC line drawing are emulated; the flood path resumes once ASCII is back.
    "line_drawing": lambda rng: b"".join(
        [b"\x1b(0", streams.plain_flood(rng, 150), b"\x1b(B", streams.plain_flood(rng, 150),
         b"\x1b)0\x0e", streams.plain_flood(rng, 100), b"\x0f", streams.plain_flood(rng, 100)]
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
    if threshold < 100 and case in ("plain", "coloured", "long_wrapped", "sticky_sgr", "colour_per_character", "mixed",
                                  "line_drawing"):
        assert fast.skipped_chars > 0, "the flood path was not exercised"


@pytest.mark.parametrize("cap", [0, 1, 100, 997, 5_000, 40_000, 10**9])
@pytest.mark.parametrize("case", ["plain", "coloured", "coloured_wrapped", "sticky_sgr", "colour_per_character"])
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


# -- tabs and non-ASCII text in floods (line_layout.py) -------------------------------

NARROW_UTF8 = ["é", "—", "─", "│", "✓", "●", "…", "π", "ß", "→", "├──", "ｰ"]


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short runs are skipped too (the default threshold is covered by the cases above)."""
    monkeypatch.setattr(flood, "FLOOD_MIN_CHARS", 16)
    shrink_segments(monkeypatch)


def text_flood(rng: random.Random, lines: int, max_width: int = 200, kinds: str = "tnwcs") -> bytes:
    """Lines mixing words with tabs (t), one-cell UTF-8 (n), wide (w) and zero-width (c)
    characters and SGR (s)."""
    makers = {
        "t": lambda: "\t" * rng.choice([1, 1, 1, 2, 3]),
        "n": lambda: rng.choice(NARROW_UTF8),
        "w": lambda: rng.choice(streams.WIDE),
        "c": lambda: rng.choice(streams.COMBINING),
        "s": lambda: rng.choice(streams.SGRS),
    }
    out = []
    for _ in range(lines):
        width = rng.choice([0, rng.randint(0, max_width)])
        parts: list[str] = []
        while sum(map(len, parts)) < width:
            kind = rng.choice(kinds + "xx")
            parts.append(makers[kind]() if kind in makers else streams.words(rng, rng.randint(1, 30)))
        out.append("".join(parts) + "\r\n")
    return "".join(out).encode()


def tab_alignment_lines(columns: int) -> bytes:
    """Tabs after every count of characters up to two rows, incl. the pending wrap at `columns`."""
    lines = []
    for count in range(2 * columns + 2):
        text = "x" * count
        lines += [text + "\tY", text + "\t\t", "\t" * (count % 12) + text + "\tZZ"]
    return ("\r\n".join(lines) + "\r\n").encode()


TEXT_FLOOD_CASES = {
    "tabs": lambda rng: text_flood(rng, 300, kinds="t"),
    "tabs_and_sgr": lambda rng: text_flood(rng, 300, kinds="ts"),
    "narrow_utf8": lambda rng: text_flood(rng, 300, kinds="ns"),
    "narrow_utf8_and_tabs": lambda rng: text_flood(rng, 300, kinds="tn"),
    "wide_and_combining": lambda rng: text_flood(rng, 200, kinds="wc"),
    "everything": lambda rng: text_flood(rng, 300),
    "everything_wrapped": lambda rng: text_flood(rng, 80, max_width=900),
}


@pytest.mark.parametrize("case", TEXT_FLOOD_CASES)
@pytest.mark.parametrize("chunk", [1 << 20, 61])
def test_text_floods_match_plain_emulation(case: str, chunk: int, small_threshold: None) -> None:
    data = TEXT_FLOOD_CASES[case](random.Random(case))
    fast = assert_identical(data, chunked(data, chunk))
    assert fast.skipped_chars > 0, "the flood path was not exercised"


@pytest.mark.parametrize("columns,lines", [(80, 24), (37, 5), (9, 3), (2, 3), (121, 40)])
def test_tab_alignments_at_every_width(columns: int, lines: int, small_threshold: None) -> None:
    data = tab_alignment_lines(columns) + tab_alignment_lines(max(columns - 1, 2))
    fast = assert_identical(data, chunked(data, 3000), columns=columns, lines=lines, scrollback_bytes=50_000)
    assert fast.skipped_chars > 0


@pytest.mark.parametrize("cap", [0, 1, 997, 5_000, 20_000])
@pytest.mark.parametrize("case", ["tabs_and_sgr", "everything", "everything_wrapped"])
def test_eviction_inside_text_source_blocks(case: str, cap: int, small_threshold: None) -> None:
    data = TEXT_FLOOD_CASES[case](random.Random(case))
    for chunk in (1 << 20, 1500):
        assert_identical(data, chunked(data, chunk), scrollback_bytes=cap)


def test_every_cap_alignment_in_text_floods(small_threshold: None) -> None:
    """Eviction boundaries at (nearly) every byte offset, through tabbed, wide and combined lines."""
    rng = random.Random(17)
    data = text_flood(rng, 40, max_width=200)
    for cap in range(0, 800, 11):
        assert_identical(data, chunked(data, 700), columns=30, lines=3, scrollback_bytes=cap)


def test_every_split_point_in_text_floods(small_threshold: None) -> None:
    rng = random.Random(19)
    data = text_flood(rng, 14, max_width=90) + b"\x1b[5btail\t\xe2\x9c\x93"
    for cut in range(1, len(data)):
        assert_identical(data, [cut], columns=30, lines=4, scrollback_bytes=600)


def test_custom_tab_stops_are_never_skipped(small_threshold: None) -> None:
    """HTS/TBC change where tabs go: such lines are emulated until a resize resets the stops."""
    rng = random.Random(23)
    lines = text_flood(rng, 200, kinds="t").split(b"\r\n")
    tabbed_only = b"".join(line + b"\r\n" for line in lines if b"\t" in line)
    for stops in (b"\x1b[3g", b"\x1b[5G\x1bH\r", b"\x1b[3g\x1b[20G\x1bH\r", b"\x1b[9G\x1b[g\r"):
        data = stops + tabbed_only
        fast = assert_identical(data, chunked(data, 997))
        assert fast.skipped_chars == 0
    emulators = [Emulator(fast_paths=fast, scrollback_bytes=30_000) for fast in (False, True)]
    for emulator in emulators:
        emulator.feed(b"\x1b[3g\x1b[13G\x1bH\r" + tabbed_only)
        emulator.resize(60, 20)  # back to the default stops: the flood path resumes
        emulator.feed(tabbed_only)
    reference, fast = emulators
    assert observe(fast) == observe(reference)
    assert fast.skipped_chars > 0


def test_repeat_after_a_skipped_flood_repeats_its_last_character(small_threshold: None) -> None:
    for last in (b"abc", b"ab\xe2\x9c\x93\t", b"x\xe4\xb8\xad\xcc\x81", b"\x1b[31mq\x1b[0m"):
        data = b"".join(b"line %d\t\r\n" % n for n in range(100)) + last + b"\r\n" * 30 + b"\x1b[4b"
        assert_identical(data, chunked(data, 500), columns=20, lines=5)


@pytest.mark.parametrize("seed", range(6))
def test_random_text_streams(seed: int, threshold: int) -> None:
    rng = random.Random(1000 + seed)
    data = b"".join(
        text_flood(rng, rng.randint(1, 60), max_width=rng.choice([40, 200, 600])) if rng.random() < 0.5
        else streams.random_stream(rng, 6)
        for _ in range(20)
    )
    columns, lines = rng.choice([(80, 24), (40, 10), (13, 4)])
    cuts = sorted(rng.sample(range(1, len(data)), min(40, len(data) - 1)))
    assert_identical(data, cuts, columns=columns, lines=lines, scrollback_bytes=rng.choice([0, 500, 50_000]))
