"""A prompt just sent reads Unknown, not Idle, while the agent's screen still looks at rest
(muxd/detectors/submit_uptake.py), through the runner, on Kilo's real frames
(tests/detector_data/cline_kilo/kilo) and on a manifest's."""

from __future__ import annotations

from pathlib import Path

import pytest

from muxd.detectors.base import ScreenContext
from muxd.detectors.registry import PACKAGED_MANIFEST_DIR, load_manifests
from muxd.detectors.manifest import parse
from muxd.detectors.manifest_detector import ManifestDetector
from muxd.detectors.runner import DetectorRunner
from muxd.detectors.state import AgentState, Activity
from muxd.detectors.submit_uptake import SUBMIT_UPTAKE_RULE, awaiting_uptake, submitted_at
from muxd.errors import BadManifest

KILO = next(d for d in load_manifests(PACKAGED_MANIFEST_DIR)[0] if d.name == "kilo")
KILO_SUBMIT_UPTAKE_S = KILO.submit_uptake_s
DATA = Path(__file__).parent / "detector_data" / "cline_kilo" / "kilo"
T0 = 1000.0  # the wall clock when the prompt is sent


def kilo_frame(name: str, now: float, last_input: bytes = b"", input_at: float | None = None) -> ScreenContext:
    lines = (DATA / f"{name}.txt").read_text(encoding="utf-8").split("\n")
    return ScreenContext(lines=lines, columns=100, process_name="kilo", process_argv=["kilo"], now=now,
                         last_input=last_input, input_at=input_at)


class Clock:
    def __init__(self) -> None:
        self.now = T0 - 10

    def __call__(self) -> float:
        return self.now


def _runner() -> tuple[DetectorRunner, Clock]:
    clock = Clock()
    runner = DetectorRunner("%1", [KILO], clock=clock)
    runner.run(kilo_frame("kilo_idle_100x30_01", clock.now), settled=True)
    clock.now = T0 - 0.2
    runner.run(kilo_frame("kilo_idle_100x30_01", clock.now))
    assert runner.state.activity.state == "Idle"  # at rest before the prompt is sent
    return runner, clock


def _look(runner: DetectorRunner, clock: Clock, at: float, name: str, last_input: bytes = b"say hello\r") -> str:
    """Two looks at the frame `name` at `at` (the second confirms it); the published state."""
    for step in (0.0, 0.1):
        clock.now = at + step
        runner.run(kilo_frame(name, clock.now, last_input, T0))
    return runner.state.activity.state


def test_kilos_resting_screen_after_enter_is_unknown_until_it_goes_busy_then_idle_again():
    runner, clock = _runner()
    # the same screen read 0.2 s ago: the Enter alone makes it a frame to read again, and its
    # Unknown is told at the first look (a slow machine's next look may be seconds away)
    clock.now = T0 + 0.05
    runner.run(kilo_frame("kilo_idle_100x30_01", clock.now, b"say hello\r", T0))
    assert runner.state.activity.state == "Unknown"
    assert runner.state.evidence.rule == SUBMIT_UPTAKE_RULE
    assert runner.pending, "looked at again while the screen is still: the wait ends by itself"
    assert _look(runner, clock, T0 + 1.5, "kilo_idle_100x30_01") == "Unknown"
    assert _look(runner, clock, T0 + 2.0, "kilo_think_100x30_04") == "Thinking"
    # The answer is done inside the window: that rest is Idle, the prompt was taken.
    assert _look(runner, clock, T0 + 2.5, "kilo_done_100x30_07") == "Idle"
    assert not runner.pending


def test_the_wait_ends_after_the_window_when_the_screen_never_changes():
    runner, clock = _runner()
    assert _look(runner, clock, T0 + 0.2, "kilo_idle_100x30_01") == "Unknown"
    assert _look(runner, clock, T0 + KILO_SUBMIT_UPTAKE_S + 0.1, "kilo_idle_100x30_01") == "Idle"
    assert not runner.pending


@pytest.mark.parametrize("last_input", [b"\x03", b"say hel", b""], ids=["ctrl-c", "typing", "nothing"])
def test_only_an_enter_opens_the_wait(last_input):
    runner, clock = _runner()
    assert _look(runner, clock, T0 + 0.2, "kilo_idle_100x30_01", last_input) == "Idle"


def test_a_detector_that_does_not_ask_for_it_is_never_held():
    text = ('name = "x"\n[identify]\nprocess_names = ["x"]\n'
            '[[rules]]\nname = "prompt"\nstate = "Idle"\npattern = "ready"\n')
    for extra, expected in (("", "Idle"), ("submit_uptake_s = 2.5\n", "Unknown")):
        clock = Clock()
        runner = DetectorRunner("%1", [ManifestDetector(parse(extra + text, "x.toml"))], clock=clock)

        def look(at: float, enter: bytes) -> str:
            for step in (0.0, 0.1):
                clock.now = at + step
                runner.run(ScreenContext(lines=["ready"], process_name="x", now=clock.now, last_input=enter,
                                         input_at=T0))
            return runner.state.activity.state

        assert look(T0 - 5, b"") == "Idle"
        assert look(T0 + 0.2, b"hi\r") == expected, extra


def test_a_manifests_window_is_a_number_of_seconds_within_bounds():
    head = 'name = "x"\n[identify]\nprocess_names = ["x"]\n[[rules]]\nname = "p"\nstate = "Idle"\npattern = "r"\n'
    assert parse(head, "x.toml").submit_uptake_s == 0.0
    assert parse("submit_uptake_s = 3\n" + head, "x.toml").submit_uptake_s == 3.0
    for bad in ("-1", "60", '"3s"'):
        with pytest.raises(BadManifest, match="submit_uptake_s must be"):
            parse(f"submit_uptake_s = {bad}\n" + head, "x.toml")


def test_what_the_prompt_was_sent_from_decides():
    sent = ScreenContext(lines=[], now=T0 + 1, last_input=b"go\r", input_at=T0)
    assert submitted_at(sent) == T0
    assert submitted_at(ScreenContext(lines=[], now=T0 + 1, last_input=b"go\r")) is None  # time unknown
    resting = AgentState(pane_id="%1", activity=Activity(state="Idle", since=T0 - 5))
    answered = AgentState(pane_id="%1", activity=Activity(state="Idle", since=T0 + 0.5))
    asking = AgentState(pane_id="%1", activity=Activity(state="AwaitingConfirmation", since=T0 - 5))
    assert awaiting_uptake(sent, resting, 3.0) and awaiting_uptake(sent, None, 3.0)
    assert not awaiting_uptake(sent, answered, 3.0)  # a rest begun after the Enter: taken and done
    assert not awaiting_uptake(sent, asking, 3.0)    # Enter answered a dialog, not a prompt
    assert not awaiting_uptake(sent, resting, 0.0)
