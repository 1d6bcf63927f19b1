"""ClineDetector and who else may claim Cline's screens (issue 32): Cline draws `❯` between
two rules as Claude Code does, so Claude's detector must give way to Cline's process and to
Cline's footer, and a program muxd does not know drawing the same screen is nobody's. The
frames are real (tests/detector_data/cline_kilo/cline; test_detector_frames.py replays them all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.claude import ClaudeDetector
from muxd.detectors.cline import ClineDetector
from muxd.detectors.registry import choose, load_detectors
from muxd.testing.screens import assert_survives_garbage

DATA = Path(__file__).parent / "detector_data" / "cline_kilo" / "cline"
DETECTOR = ClineDetector()
DETECTORS = load_detectors()
LIVE_FRAMES = sorted(path for path in DATA.glob("*.txt") if "_exit_" not in path.name)


def frame(name: str, **kwargs: object) -> ScreenContext:
    path = DATA / f"{name}.txt"
    columns = int(name.split("_")[2].split("x")[0])
    return ScreenContext(lines=path.read_text(encoding="utf-8").split("\n"), columns=columns, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name, argv", [
    ("cline", ["cline", "-i"]),
    ("cline", ["/work/.agents/npm/node_modules/@cline/cli-linux-x64/bin/cline", "-i"]),
    ("node", ["node", "/usr/lib/node_modules/cline/bin/cline"]),
])
def test_identify_by_process(name: str, argv: list[str]) -> None:
    assert DETECTOR.identify(ScreenContext(lines=[], process_name=name, process_argv=argv)) == 1.0


@pytest.mark.parametrize("path", LIVE_FRAMES, ids=[p.stem for p in LIVE_FRAMES])
def test_cline_in_front_is_never_claude(path: Path) -> None:
    ctx = frame(path.stem, process_name="cline", process_argv=["cline", "-i"])
    assert ClaudeDetector().identify(ctx) < 0.5
    assert choose(DETECTORS, ctx)[0] is not None and choose(DETECTORS, ctx)[0].name == "cline"
    # with no process known (a replayed capture) Cline's footer still outweighs Claude's box
    assert choose(DETECTORS, frame(path.stem))[0].name == "cline"  # type: ignore[union-attr]


@pytest.mark.parametrize("stem", ["cline_think_80x24_03", "cline_idle_120x40_01", "cline_ask_60x18_08"])
def test_an_unknown_program_drawing_clines_screen_is_nobody(stem: str) -> None:
    ctx = frame(stem, process_name="mystery-agent", process_argv=["mystery-agent"])
    detector, score = choose(DETECTORS, ctx)
    assert detector is None and score < 0.5


def test_a_claude_screen_is_not_clines() -> None:
    rows = ["● Done.", "─" * 40, "❯ ", "─" * 40, "  ⏵⏵ accept edits on (shift+tab to cycle)"]
    assert DETECTOR.identify(ScreenContext(lines=rows, columns=80)) < 0.5


@pytest.mark.parametrize("stem", ["cline_exit_80x24_13", "cline_exit_50x16_13"])
def test_the_session_summary_is_exited_with_its_id(stem: str) -> None:
    found = DETECTOR.detect(frame(stem, exited=True), None)
    assert (found.state, found.rule, found.model, found.cost_usd) == (
        "Exited", "session-summary", "openai-compatible:fake-model", 0.0)
    assert found.session_id and f"cline --id {found.session_id}" in (DATA / f"{stem}.txt").read_text()
    # left above a shell prompt, the summary says Cline ran here
    rows = [*frame(stem).lines, "bash-5.2$ "]
    assert DETECTOR.identify(ScreenContext(lines=rows, columns=80)) >= 0.5


def test_the_dialog_over_a_stale_spinner_is_the_question() -> None:
    found = DETECTOR.detect(frame("cline_ask_120x40_08"), None)
    assert (found.state, found.tool, found.confirmation.prompt) == (  # type: ignore[union-attr]
        "AwaitingConfirmation", "run_commands", "Approve tool call?")


def test_a_draft_is_input_and_the_placeholder_is_not() -> None:
    assert DETECTOR.detect(frame("cline_draft_80x24_02"), None).input_text == "say hello"
    assert DETECTOR.detect(frame("cline_idle_80x24_01"), None).input_text is None


def test_garbage_never_raises() -> None:
    assert_survives_garbage(DETECTOR, "─❯⠹* Thinking... (esc to cancel) ○ Plan ● Act (Tab) Auto-approve all [y] Approve "
                            "Cline needs permission Session Summary Continue cline --id x(1)$", seed=5, widths=(1, 20, 100))


def test_a_message_sent_before_the_spinner_shows_is_unknown_not_idle() -> None:
    ctx = frame("cline_think_80x24_03")
    rows = ["" if "Thinking..." in row else row for row in ctx.lines]
    found = DETECTOR.detect(ScreenContext(lines=rows, columns=80), None)
    assert (found.state, found.rule, found.line) == ("Unknown", "message-unanswered", "❯ say hello")


def test_ask_question_is_awaiting_input_with_its_options() -> None:
    # not in labels.tsv (one size only): captured at 100x30 from Cline 3.0.65's ask_question
    found = DETECTOR.detect(frame("cline_question_100x30_02"), None)
    assert (found.state, found.tool, found.model) == ("AwaitingInput", "ask_question", "fake-model")
    assert found.confirmation is not None
    assert (found.confirmation.prompt, found.confirmation.options) == ("Which colour do you want?",
                                                                        ["Red", "Blue", "Green"])
