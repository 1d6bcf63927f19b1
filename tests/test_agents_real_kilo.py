"""Kilo 7.7.9 (`kilo`, an opencode fork) for real as a muxd pane's program, against a
scripted fake Chat Completions API (issue 32).

What is asserted is what tests/detector_data/cline_kilo/labels.tsv says this CLI shows: Idle
under `tab agents  ctrl+p commands`; Thinking under the `⬝⬝■■ esc interrupt` bar (Kilo
shows no spinner text nor elapsed time while a turn runs); Generating once the answer's text
streams above its footer; the model from each answer's
`▣  Code · Fake Model · 11.6s` and the tokens from `3.5K  ctrl+p commands`;
AwaitingConfirmation on `△ Permission required` (Allow once / Allow always / Reject, tool
bash); ToolUse while `┃  ⠼ sleep 2; echo hi` runs; an API error retried under Thinking with
the error; Exited with the session id of the `kilo -s ses_…` it prints as it quits. Never
opencode, never Unknown-then-Idle mid-turn, and never Idle between the Enter and the first busy
state, though for up to ~2 s Kilo's screen looks exactly like its prompt at rest (its
detector's submit_uptake_s).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import Call, Fail, OpenAIChatFake, Pause, Say, launch
from muxd.testing.fake_models.agent_pane import AgentPane, assert_no_idle_before_busy, states_mid_turn

pytestmark = pytest.mark.agents

ANSWER = "Hello from the fake model, streamed slowly word by word so that it is seen."
COMMAND = "sleep 2; echo hi"
MODEL = "Fake Model"  # the name its configuration gives the fake's model
STARTUP_TIMEOUT_S = 40  # Kilo's first start migrates its database


@pytest.fixture
def kilo(muxd_server, tmp_path) -> Iterator[tuple[AgentPane, OpenAIChatFake]]:
    bin_dir, why = launch.find_cli("kilo")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIChatFake([
        [Pause(1), Say(ANSWER, 0.12)],
        [Call("bash", {"command": COMMAND, "description": "Say hi"})],
        [Say("The command ran fine.", 0.05)],
        [Fail(401, "fake failure", times=1), Say("Recovered after the failure.", 0.05)],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.kilo(tmp_path, fake.url, bin_dir))
        try:
            yield pane.start(), fake
        finally:
            pane.close()


def test_kilo_states_through_a_session(kilo):
    pane, fake = kilo

    idle = pane.wait_for("Idle", lambda s: s["agent_type"] == "kilo", timeout=STARTUP_TIMEOUT_S,
                         what="Kilo Idle at its home screen")
    with pane.explained("first Idle"):
        assert idle["is_awaiting_input"] is True
        # the mode row names the model with its provider after it, nothing to cut at: no model yet
        assert idle["session"]["model"] is None

    mark = pane.mark()
    pane.submit("say hello")
    busy = pane.wait_for("Thinking", what="Thinking under the busy bar")
    assert_no_idle_before_busy(pane, mark)
    pane.wait_for("Generating", what="the answer's text streaming")
    done = pane.wait_for("Idle", lambda s: ANSWER.split()[-1] in pane.screen(), timeout=30,
                         what="Idle after the answer")
    with pane.explained("first turn", mark):
        assert busy["activity"]["elapsed_s"] is None, "Kilo shows no elapsed time while busy"
        assert "Idle" not in states_mid_turn(pane, mark, done), "no Idle mid-turn"
        assert done["session"]["model"] == MODEL
        assert done["session"]["tokens_used"] and done["session"]["tokens_used"] >= 1000

    mark = pane.mark()
    pane.submit("run a command")
    asking = pane.wait_for("AwaitingConfirmation", what="the permission prompt")
    with pane.explained("permission", mark):
        assert asking["confirmation"] == {"prompt": "Permission required",
                                          "options": ["Allow once", "Allow always", "Reject"]}
        assert asking["tool"] == "bash"
    pane.press("Enter")  # Allow once
    tool = pane.wait_for("ToolUse", what="the command at work")
    pane.wait_for("Idle", lambda s: "The command ran fine." in pane.screen(), what="Idle after the command")
    with pane.explained("tool use", mark):
        assert tool["activity"]["description"] == COMMAND

    mark = pane.mark()
    pane.submit("fail now")
    retrying = pane.wait_for("Thinking", lambda s: s["error"], what="Thinking with the retried error")
    pane.wait_for("Idle", lambda s: "Recovered after the failure." in pane.screen(), timeout=30,
                  what="Idle after the retries")
    with pane.explained("retried error", mark):
        assert retrying["error"]["message"] == "fake failure"

    mark = pane.mark()
    pane.submit("/exit")
    exited = pane.wait_for("Exited", what="Exited after /exit")
    with pane.explained("exit", mark):
        assert exited["agent_type"] == "kilo" and exited["session"]["id"].startswith("ses_")
    with pane.explained("never another agent"):
        assert {s["agent_type"] for s in pane.states.since(0)} <= {"kilo", None}
