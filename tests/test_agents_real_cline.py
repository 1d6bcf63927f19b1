"""Cline 3.0.65 (`cline -i`) for real as a muxd pane's program, against a scripted fake
Chat Completions API (issue 32).

What is asserted is what tests/detector_data/cline_kilo/labels.tsv says this CLI shows: Idle at
`❯ What can I do for you?` with `fake-model (N) $0.00` under the box; Thinking under
`⠹ Thinking... (esc to cancel)`; Generating while the answer streams behind the spinner;
AwaitingConfirmation on "Approve tool call?" (`[y] Approve   [n] Deny`); ToolUse under
`⠹ run_commands(…)`; an API error as Idle with `* Error: …`; Exited after /exit with the
summary's session id. Never claude, never Idle while a turn runs. Cline leaves a hub daemon
behind: the pane's close ends it, and nothing of this HOME survives.
Never Idle between a prompt's Enter and its first busy state.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import Call, Fail, OpenAIChatFake, Pause, Say, launch
from muxd.testing.fake_models.agent_pane import (AgentPane, assert_no_idle_before_busy, end_processes_with_home,
                                                 states_mid_turn)
from muxd.testing.fake_models.openai_chat import MODEL_ID

pytestmark = pytest.mark.agents

ANSWER = "Hello from the fake model, streamed slowly word by word so that it is seen."
COMMAND = "sleep 2; echo hi"
STARTUP_TIMEOUT_S = 40  # Cline's first start builds its databases


@pytest.fixture
def cline(muxd_server, tmp_path) -> Iterator[tuple[AgentPane, OpenAIChatFake]]:
    bin_dir, why = launch.find_cli("cline")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIChatFake([
        [Pause(1), Say(ANSWER, 0.12)],
        [Call("run_commands", {"commands": [COMMAND]})],
        [Say("The command ran fine.", 0.05)],
        [Fail(401, "fake failure")],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.cline(tmp_path, fake.url, bin_dir))
        try:
            yield pane.start(), fake
        finally:
            pane.close()  # ends the hub daemon too (found by its HOME)
            assert not end_processes_with_home(pane.launch.home), "a process Cline started outlived its pane's close"


def test_cline_states_through_a_session(cline):
    pane, fake = cline

    idle = pane.wait_for("Idle", lambda s: s["agent_type"] == "cline" and s["session"]["model"],
                         timeout=STARTUP_TIMEOUT_S, what="Cline Idle with its model")
    with pane.explained("first Idle"):
        assert idle["session"]["model"] == MODEL_ID and idle["is_awaiting_input"] is True
        assert idle["sources"]["state"]["source"] == "screen"

    mark = pane.mark()
    pane.submit("say hello")
    thinking = pane.wait_for("Thinking", what="Thinking under the spinner")
    assert_no_idle_before_busy(pane, mark)
    pane.wait_for("Generating", what="the answer streaming behind the spinner")
    done = pane.wait_for("Idle", lambda s: ANSWER.split()[-1] in pane.screen(), what="Idle after the answer")
    with pane.explained("first turn", mark):
        assert thinking["activity"]["description"] == "Thinking..."
        assert thinking["activity"]["elapsed_s"] is None, "Cline shows no elapsed time"
        assert "Idle" not in states_mid_turn(pane, mark, done), "no Idle mid-turn"
        assert done["session"]["tokens_used"] and done["session"]["tokens_used"] > 0

    mark = pane.mark()
    pane.submit("run a command")
    asking = pane.wait_for("AwaitingConfirmation", what="the approval dialog")
    with pane.explained("approval", mark):
        assert asking["confirmation"] == {"prompt": "Approve tool call?", "options": ["Approve", "Deny"]}
        assert asking["tool"] == "run_commands" and asking["is_awaiting_input"] is False
    pane.press("y")
    tool = pane.wait_for("ToolUse", what="the command at work")
    pane.wait_for("Idle", lambda s: "The command ran fine." in pane.screen(), what="Idle after the command")
    with pane.explained("tool use", mark):
        assert tool["tool"] == "run_commands" and tool["activity"]["description"] == f"run_commands({COMMAND})"

    mark = pane.mark()
    pane.submit("fail now")
    failed = pane.wait_for("Idle", lambda s: s["error"], what="Idle with the API error")
    with pane.explained("error", mark):
        assert failed["error"]["message"] == "fake failure"

    mark = pane.mark()
    pane.submit("/exit")
    exited = pane.wait_for("Exited", what="Exited after /exit")
    with pane.explained("exit", mark):
        assert exited["agent_type"] == "cline"
        assert exited["session"]["id"] and f"cline --id {exited['session']['id']}" in pane.screen()
    with pane.explained("never another agent"):
        assert {s["agent_type"] for s in pane.states.since(0)} <= {"cline", None}
