"""Kilo's manifest and opencode's, on the same TUI (issue 32): Kilo is an opencode fork, so each
takes its own process, Kilo's words (its modes, its name) keep opencode's detector off Kilo's
screens (opencode's manifest names them in `foreign_signatures`), and opencode's own screens
are not Kilo's. Both are manifests (muxd/detectors/manifests/). The frames are real
(tests/detector_data/cline_kilo/kilo; test_detector_frames.py replays them all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import PACKAGED_MANIFEST_DIR, choose, load_detectors, load_manifests
from muxd.testing.screens import assert_survives_garbage, margin_rows

DATA = Path(__file__).parent / "detector_data" / "cline_kilo" / "kilo"
PACKAGED = {detector.name: detector for detector in load_manifests(PACKAGED_MANIFEST_DIR)[0]}
DETECTOR = PACKAGED["kilo"]
OPENCODE = PACKAGED["opencode"]
DETECTORS = load_detectors()
LIVE_FRAMES = sorted(path for path in DATA.glob("*.txt") if "_exit_" not in path.name)
OPENCODE_IDLE = margin_rows("""
    |┃  Ask anything... "What is the tech stack of this project?"
    |┃
    |┃  Build  Big Pickle  OpenCode Zen
    |                                                   tab agents  ctrl+p commands
""")


def frame(name: str, **kwargs: object) -> ScreenContext:
    path = DATA / f"{name}.txt"
    columns = int(name.split("_")[2].split("x")[0])
    return ScreenContext(lines=path.read_text(encoding="utf-8").split("\n"), columns=columns, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name, argv", [
    ("kilo", ["kilo"]),
    ("kilo", ["/work/.agents/npm/node_modules/@kilocode/cli-linux-x64/bin/kilo"]),
    ("node", ["node", "/usr/lib/node_modules/@kilocode/cli/bin/kilo"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ScreenContext(lines=[], process_name=name, process_argv=argv)) == 1.0
    assert OPENCODE.identify(ScreenContext(lines=[], process_name=name, process_argv=argv)) < 0.5


@pytest.mark.parametrize("path", LIVE_FRAMES, ids=[p.stem for p in LIVE_FRAMES])
def test_kilo_is_never_opencode(path: Path) -> None:
    assert OPENCODE.identify(frame(path.stem, process_name="kilo", process_argv=["kilo"])) < 0.5
    if "_ask_" not in path.name:  # Kilo's mode row under the input box: opencode's rows there do not count
        assert OPENCODE.identify(frame(path.stem)) < 0.5
    chosen, _ = choose(DETECTORS, frame(path.stem))
    if chosen is not None:  # a permission prompt alone shows no word of Kilo's: then nobody, not opencode
        assert chosen.name == "kilo"


def test_opencode_screens_are_not_kilos() -> None:
    ctx = ScreenContext(lines=OPENCODE_IDLE, columns=100)
    assert DETECTOR.identify(ctx) < 0.5
    assert choose(DETECTORS, ctx)[0].name == "opencode"  # type: ignore[union-attr]


def test_an_unknown_program_drawing_kilos_screen_is_nobody() -> None:
    detector, score = choose(DETECTORS, frame("kilo_done_80x24_07", process_name="mystery", process_argv=["mystery"]))
    assert detector is None and score < 0.5


@pytest.mark.parametrize("stem", ["kilo_exit_80x24_15", "kilo_exit_50x16_15"])
def test_the_resume_command_is_exited_with_the_session(stem: str) -> None:
    found = DETECTOR.detect(frame(stem, exited=True), None)
    assert (found.state, found.rule) == ("Exited", "resume-command")
    assert found.session_id and found.session_id.startswith("ses_")
    assert f"kilo -s {found.session_id}" in (DATA / f"{stem}.txt").read_text()


def test_the_session_view_before_the_answer_is_unknown_not_idle() -> None:
    found = DETECTOR.detect(frame("kilo_think_80x24_04"), None)
    assert (found.state, found.rule) == ("Unknown", "message-unanswered")


def test_a_draft_is_input_and_the_placeholder_is_not() -> None:
    assert DETECTOR.detect(frame("kilo_draft_80x24_02"), None).input_text == "say hello"
    assert DETECTOR.detect(frame("kilo_idle_80x24_01"), None).input_text is None


def test_garbage_never_raises() -> None:
    assert_survives_garbage(DETECTOR, "┃▣⬝■⠼ Code · Fake Model · 1.2s esc interrupt ctrl+p commands △ Permission required "
                            "kilo -s ses_x Allow once [retrying in 2s attempt #1]$#", seed=7, widths=(1, 20, 100))
