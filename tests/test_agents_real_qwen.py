"""Qwen Code 0.15.10 for real in a muxd pane, against a scripted fake Chat Completions API.

What is asserted is what tests/detector_data/issue32 shows this CLI draws: Idle at
`>   Type your message` between two rules, with the model from the banner box (`API Key |
fake-model`); Thinking under `⠦ <witty phrase> (Ns · ↓ N tokens · esc to cancel)` with its
elapsed seconds; the Shell confirmation box over `Waiting for user confirmation...`; ToolUse
while the approved command runs (its ⊶ box); Idle with the `✕ [API Error: …]`; Exited after
Ctrl+C twice with the session id of its goodbye box. Never `gemini`, whose fork it is.
Never Idle between a prompt's Enter and its first busy state (Qwen's prompt looks at rest
for ~1.5 s: its detector's submit_uptake_s).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from muxd.testing.fake_models import Call, Fail, OpenAIChatFake, Pause, Say, launch
from muxd.testing.fake_models.agent_pane import AgentPane, assert_no_idle_before_busy
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

COMMAND = "mkdir -p qwen_demo && sleep 3 && ls"
ANSWER = "Hello from the fake model. All done."


@pytest.fixture
def qwen(muxd_server, tmp_path) -> Iterator[tuple[AgentPane, OpenAIChatFake]]:
    bin_dir, why = launch.find_cli("qwen")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIChatFake([
        [Pause(3), Say(ANSWER, 0.05)],
        [Call("run_shell_command", {"command": COMMAND, "description": "Make a demo directory"})],
        [Say("The command finished.", 0.05)],
        [Fail(400, "fake bad request", times=None)],
    ])
    with fake:
        pane = AgentPane(muxd_server, launch.qwen(tmp_path, fake.url, bin_dir), size=(100, 30))
        try:
            yield pane.start(), fake
        finally:
            pane.close()


def test_qwen_states_through_a_session(qwen):
    pane, fake = qwen

    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], timeout=40, what="Idle with the banner's model")
    with pane.explained("first Idle"):
        assert idle["agent_type"] == "qwen" and idle["is_awaiting_input"] is True
        assert idle["session"]["model"] == "fake-model"
        assert idle["sources"]["state"]["source"] == "screen"

    mark = pane.mark()
    pane.submit("hello there")
    thinking = pane.wait_for("Thinking", lambda s: s["activity"]["elapsed_s"] is not None,
                             what="Thinking with elapsed time")
    assert_no_idle_before_busy(pane, mark)
    with pane.explained("Thinking", mark):
        # Qwen's witty phrase, picked at random ("Reticulating splines...", "I'm Feeling Lucky"),
        # without the elapsed time and hint that follow it on the row.
        phrase = thinking["activity"]["description"]
        assert phrase and "esc to cancel" not in phrase and " · " not in phrase, "Qwen's witty phrase"
    pane.wait_for("Idle", lambda s: ANSWER in pane.screen(), what="Idle after the answer")

    mark = pane.mark()
    pane.submit("please make a directory")
    asking = pane.wait_for("AwaitingConfirmation")
    with pane.explained("Shell confirmation", mark):
        assert asking["tool"] == "Shell" and asking["is_awaiting_confirmation"] is True
        assert asking["confirmation"]["prompt"].startswith("Allow execution of: '")
        assert asking["confirmation"]["options"][0] == "1. Yes, allow once"
        assert asking["confirmation"]["options"][-1] == "4. No, suggest changes (esc)"
    mark = pane.mark()
    pane.press("Enter")
    running = pane.wait_for("ToolUse", what="ToolUse while the command runs")
    with pane.explained("ToolUse", mark):
        assert running["tool"] == "Shell"
    done = pane.wait_for("Idle", lambda s: "The command finished." in pane.screen(), what="Idle after the tool")
    with pane.explained("after the tool", mark):
        assert (pane.launch.cwd / "qwen_demo").is_dir()
        assert "Shell" in done["recent_tools"]

    mark = pane.mark()
    pane.submit("one more thing")
    failed = pane.wait_for("Idle", lambda s: s["error"], what="Idle with the API error")
    with pane.explained("API error", mark):
        assert "400 fake bad request" in failed["error"]["message"]

    # Ctrl+C twice: a typed /quit stops at the completion menu it opens
    mark = pane.mark()
    pane.press("C-c")
    wait_until(lambda: "again to exit" in pane.screen(), timeout=20, message="Qwen's exit hint")
    pane.press("C-c")
    exited = pane.wait_for("Exited")
    with pane.explained("Exited", mark):
        assert exited["agent_type"] == "qwen"
        assert exited["session"]["id"] and exited["session"]["id"] in pane.screen()
    every = pane.states.since(0)
    assert not [s for s in every if s["agent_type"] == "gemini"], "Qwen Code never reads as Gemini CLI"
