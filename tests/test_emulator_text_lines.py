"""`text_lines(start)`, the rows the history reads a turn's answer from, is
`capture(start, join_wrapped=True).split("\\n")` on both backends. The libghostty backend reads
the screen through its plain-text formatter in one call and falls back to the capture where
the two could lay rows out differently: checked on the real agents' recordings, on random
escape soup, and on the screens that need the fallback."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from muxd.emulator.backend import new_emulator
from muxd.emulator.ghostty_ffi import lib
from muxd.emulator.ghostty_format import ACTIVE
from muxd.testing.emulator_fuzz_inputs import escape_soup, random_bytes

RECORDINGS = sorted((Path(__file__).parent.parent / "benchmarks" / "data" / "agents").glob("*.cast.gz"))


def starts(em) -> list[int]:
    return [0, -1, -em.lines, -em.history_size]


def expected(em, start: int) -> list[str]:
    return em.capture(start, join_wrapped=True).split("\n")


def recording(path: Path) -> tuple[int, int, list[bytes]]:
    with gzip.open(path, "rt") as lines:
        header = json.loads(next(lines))
        return header["width"], header["height"], [json.loads(line)[2].encode() for line in lines if line.strip()]


@pytest.mark.parametrize("backend", ["ghostty", "pyte"])
@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name.split(".")[0])
def test_an_agents_screens_read_as_the_capture_reads_them(path: Path, backend: str) -> None:
    width, height, chunks = recording(path)
    compared = 0
    for columns, lines in ((width, height), (width - 7, height - 3)):  # a narrower pane soft-wraps rows
        em = new_emulator(columns, lines, scrollback_bytes=1 << 20, backend=backend)
        for number, chunk in enumerate(chunks):
            em.feed(chunk)
            if number % 7 == 0 or number == len(chunks) - 1:
                for start in starts(em):
                    assert em.text_lines(start) == expected(em, start), (columns, number, start)
                    compared += 1
    assert compared > 50


def test_random_screens_read_as_the_capture_reads_them() -> None:
    rng = random.Random(29)
    for case in range(200):
        em = new_emulator(rng.choice([20, 40, 80]), rng.choice([5, 10, 24]), scrollback_bytes=1 << 16,
                          backend="ghostty")
        for _ in range(4):
            em.feed(escape_soup(rng, 400) if rng.random() < 0.7 else random_bytes(rng, 300))
            for start in starts(em):
                assert em.text_lines(start) == expected(em, start), (case, start)


# Pieces of an agent's rows: box drawing and its marks, wide characters, emoji (with a skin
# tone, VS16, a ZWJ sequence), combining marks, and spaces (a row of them soft-wraps blank).
NARROW_PIECES = ["● Here is my answer.", "❯ ", "✻ Brewed for 2s", "─" * 13, "  ⎿  (No content)", " " * 17,
                 "word ", "x" * 23, "·✢✳✶✻✽", "⏸ manual mode on"]
OTHER_PIECES = ["中文字", "🙂", "👍🏽", "❤️", "👨‍👩‍👧", "e\u0301", "a\u0308b"]
# Between rows: the next row, an erase (in line, in display, of characters), a scroll.
MOVES = ["\r\n", "\r\n", "\x1b[K\r\n", "\x1b[J\r\n", "\x1b[2K\r\n", "\x1b[5X\r\n", "\n\r", "\x1b[1K\r\n", ""]


def agent_frames(rng: random.Random, columns: int, lines: int, frames: int) -> list[bytes]:
    """Frames a TUI could draw: rows of pieces at chosen rows, most cut to fit (the rest wrap),
    erased and scrolled in the ways agents do; on some screens wide or joined characters."""
    pieces = NARROW_PIECES + (OTHER_PIECES if rng.random() < 0.3 else [])
    out = []
    for _ in range(frames):
        frame = [f"\x1b[{rng.randint(1, lines)};1H"]
        for _ in range(rng.randint(1, lines)):
            row = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
            frame.append(row[:columns - 1] if rng.random() < 0.95 else row)
            frame.append(rng.choice(MOVES))
        out.append("".join(frame).encode())
    return out


def test_agent_like_screens_read_as_the_capture_reads_them_on_the_fast_path_or_off_it() -> None:
    rng = random.Random(2905)
    taken = {True: 0, False: 0}
    for case in range(150):
        columns, lines = rng.choice([(20, 6), (40, 10), (80, 24)])
        em = new_emulator(columns, lines, scrollback_bytes=1 << 14, backend="ghostty")
        plain_screen = em._plain_screen

        def counted() -> list[str] | None:
            screen = plain_screen()
            taken[screen is not None] += 1
            return screen

        em._plain_screen = counted  # type: ignore[method-assign]
        for frame in agent_frames(rng, columns, lines, 6):
            em.feed(frame)
            if rng.random() < 0.5:
                em.display_lines()  # the detector read this frame
            for start in starts(em):
                assert em.text_lines(start) == expected(em, start), (case, start)
    # Both ways were taken often: the fast one is checked, not only the capture it falls back to.
    assert taken[True] > 300 and taken[False] > 300, taken


def test_a_wrap_or_grapheme_flag_is_found_on_any_row_of_a_screen_long_scrolled() -> None:
    """The flags are read through refs into one native page; a screen that scrolled through
    many pages still has each row's flags read right (checked against the row's own)."""
    em = new_emulator(30, 8, scrollback_bytes=1 << 16, backend="ghostty")
    native = em._history
    rows = {0: b"w" * 35, 4: "e\u0301".encode()}
    seen = set()
    for number in range(400):
        em.feed(rows.get(number % 9, f"row {number}".encode()) + b"\r\n")
        flags = [native.wrapped(ACTIVE, y) or native._flagged(ACTIVE, y, lib.GHOSTTY_ROW_DATA_GRAPHEME)
                 for y in range(em.lines)]
        seen.update(flags)
        assert native.any_wrapped_or_grapheme(ACTIVE, 0, em.lines - 1) == any(flags), number
        for y in range(em.lines):
            assert native.any_wrapped_or_grapheme(ACTIVE, y, y) == flags[y], (number, y)
    assert seen == {True, False}


def no_capture(*args: object, **kwargs: object) -> str:
    raise AssertionError("read through the capture")


def test_an_agent_screen_is_read_without_the_capture() -> None:
    em = new_emulator(40, 8, backend="ghostty")
    em.feed("● Here is my answer.\r\n\r\n✻ Brewed for 2s\r\n\x1b[1m❯\x1b[0m ".encode())
    want = expected(em, 0)
    em.capture = no_capture  # type: ignore[method-assign]
    assert em.text_lines(0) == want == ["● Here is my answer.", "", "✻ Brewed for 2s", "❯", "", "", "", "", ""]


@pytest.mark.parametrize("screen", [
    b"x" * 45 + b"\r\nnext",           # a soft wrap between written rows
    b"y" * 40 + b" " * 40,            # a wrap into spaces the formatter trims
    "中".encode() * 21,                # a wide character that did not fit
    "e\u0301 ok".encode(),             # a combining mark
    "a \u0301b".encode(),              # one on a space: the plain formatter drops it
])
def test_a_screen_the_formatter_could_lay_out_otherwise_is_read_through_the_capture(screen: bytes) -> None:
    em = new_emulator(40, 6, backend="ghostty")
    em.feed(screen)
    captured: list[int] = []
    capture = em.capture

    def counted(*args: object, **kwargs: object) -> str:
        captured.append(1)
        return capture(*args, **kwargs)  # type: ignore[arg-type]

    em.capture = counted  # type: ignore[method-assign]
    assert em.text_lines(0) == capture(0, join_wrapped=True).split("\n")
    assert captured
