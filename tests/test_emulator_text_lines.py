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
