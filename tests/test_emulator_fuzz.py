"""A slice of the emulator fuzzer (benchmarks/fuzz_emulator.py runs it at length): seeded
hostile output through muxd's feed path on both backends, each in a child process so that a
native crash fails the test instead of ending pytest; and that harness's own promises: a
crash or a hang is reported with where it happened, and a case is the same bytes every time."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from muxd.emulator.backend import new_emulator
from muxd.testing.emulator_fuzz import FuzzPlan, fuzz_backend
from muxd.testing.emulator_fuzz_cases import KINDS, RealOutput, make_case
from muxd.testing.emulator_fuzz_inputs import escape_soup, tokens
from muxd.testing.patience import stretched

RECORDINGS = tuple(str(p) for p in sorted((Path(__file__).parent.parent / "benchmarks" / "data" / "agents")
                                          .glob("*.cast.gz")))
FUZZ_SEED = 1
SLICE_MB = 2.0          # a backend: ~2-4 s each with the reads in between
CHILD_TIMEOUT_S = 60
HANG_TIMEOUT_S = 2      # for the hang test: far less than its run needs
# What the ghostty backend is known to do differently, each pinned by a strict xfail test
# below: once it is fixed, that test passes (XPASS fails the suite) and its name goes from here.
KNOWN_GHOSTTY_DIVERGENCES = ("display-agrees-with-capture",)


def _shown(defects: list) -> str:
    return "\n".join(f"{d.kind} in case {d.case}, step {d.step} ({d.what}), piece {d.piece}: {d.message}"
                     for d in defects)


@pytest.mark.parametrize("backend", ["pyte", "ghostty"])
def test_hostile_output_raises_nothing_and_breaks_no_invariant(backend: str) -> None:
    allowed = KNOWN_GHOSTTY_DIVERGENCES if backend == "ghostty" else ()
    plan = FuzzPlan(backend, FUZZ_SEED, SLICE_MB, corpus=RECORDINGS, allowed=allowed)
    report = fuzz_backend(plan, timeout=stretched(CHILD_TIMEOUT_S))
    assert report.defect_count == 0, _shown(report.defects)
    assert report.bytes_fed >= SLICE_MB * 1e6, report
    assert set(report.bytes_by_kind) == set(KINDS), report  # every kind of input was fed
    assert report.reads > 100 and report.resizes > 0 and report.reply_bytes > 0, report


_SEGFAULT_ON_THIRD_PIECE = """
import ctypes
from muxd.emulator.emulator import Emulator

_feed = Emulator.feed
_pieces = [0]


def feed(self, data):
    _pieces[0] += 1
    if _pieces[0] == 3:
        ctypes.string_at(0)  # a native crash, where a backend bug would cause one
    _feed(self, data)


Emulator.feed = feed
"""


def test_a_crash_in_the_child_is_a_defect_that_says_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sitecustomize.py").write_text(_SEGFAULT_ON_THIRD_PIECE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    report = fuzz_backend(FuzzPlan("pyte", FUZZ_SEED, case=0, corpus=RECORDINGS), timeout=stretched(CHILD_TIMEOUT_S))
    [defect] = report.defects
    assert defect.kind == "crash" and "SIGSEGV" in defect.message, _shown(report.defects)
    assert "Segmentation fault" in defect.message  # faulthandler's stack from the child
    assert (defect.case, defect.piece) == (0, 2)  # the third piece of case 0
    first_feeds = [step for step in make_case(FUZZ_SEED, 0, RealOutput.load([Path(p) for p in RECORDINGS])).steps
                   if step.op == "feed"][:3]
    assert defect.offset == first_feeds[2].args[0]


def test_a_child_that_does_not_report_in_time_is_a_hang_defect() -> None:
    report = fuzz_backend(FuzzPlan("pyte", FUZZ_SEED, mb=1000, corpus=RECORDINGS), timeout=HANG_TIMEOUT_S)
    [defect] = report.defects
    assert defect.kind == "hang" and f"within {HANG_TIMEOUT_S} s" in defect.message, _shown(report.defects)


def test_a_case_is_the_same_bytes_and_steps_every_time(tmp_path: Path) -> None:
    real = RealOutput.load([Path(p) for p in RECORDINGS])
    for number in range(6):
        one, two = make_case(FUZZ_SEED, number, real), make_case(FUZZ_SEED, number, real)
        assert (one.kind, one.data, one.steps) == (two.kind, two.data, two.steps)
        assert one.steps[-1].op != "feed" and max(s.args[1] for s in one.steps if s.op == "feed") == len(one.data)
    data_path, steps_path = one.save(tmp_path)
    assert data_path.read_bytes() == one.data
    assert len(steps_path.read_text().splitlines()) == len(one.steps) + 1


def test_cutting_output_into_sequences_and_lines_loses_no_byte() -> None:
    rng = random.Random(FUZZ_SEED)
    for data in (escape_soup(rng, 50_000), rng.randbytes(50_000), b"\x1b", b"a\nb\x1b[1m\x1b]0;t"):
        assert b"".join(tokens(data)) == data


def test_ghostty_ignores_del() -> None:
    """libghostty-vt would draw DEL (0x7f) in a cell; tmux and pyte ignore it, so muxd drops it."""
    em = new_emulator(20, 3, backend="ghostty")
    em.feed(b"a\x7fb")
    assert em.display_lines()[0] == "ab" and em.cursor == (2, 0)


@pytest.mark.xfail(strict=True, reason="ghostty's display_lines (its plain formatter) drops zero-width marks "
                                       "that capture (read cell by cell) keeps")
def test_ghostty_display_lines_show_combining_marks_as_capture_does() -> None:
    em = new_emulator(20, 3, backend="ghostty")
    em.feed("a \u07a8b \u200d\u0301e".encode())
    assert em.display_lines()[0] == em.capture(0, 0).rstrip("\n")
