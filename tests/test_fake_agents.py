"""The fake agent CLIs (muxd.testing.fake_agents) in real muxd panes: the daemon publishes,
live, what the detectors read off screens drawn as Claude Code, Codex CLI, Gemini CLI and
Aider draw them. States come from the daemon's event stream (AgentPane), so a state that
lasts a second is seen however the polling falls; waits are on conditions, never sleeps."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from muxd.testing.fake_agents import aider, codex, gemini
from muxd.testing.fake_models.agent_pane import AgentPane
from muxd.testing.fake_models.launch import AgentLaunch


@pytest.fixture
def fake(request, muxd_server, tmp_path) -> Iterator[AgentPane]:
    """A pane running `python -m muxd.testing.fake_agent <request.param>`, watched from the start."""
    launch = AgentLaunch(argv=[sys.executable, "-m", "muxd.testing.fake_agent", request.param],
                         env={"HOME": str(tmp_path)}, cwd=tmp_path, home=tmp_path)
    pane = AgentPane(muxd_server, launch, session=request.param)
    try:
        yield pane.start()
    finally:
        pane.close()


@pytest.fixture
def fake_from_shell(request, muxd_server, tmp_path) -> Iterator[AgentPane]:
    """A pane running bash, where `python -m muxd.testing.fake_agent <request.param>` is typed."""
    launch = AgentLaunch(argv=[sys.executable, "-m", "muxd.testing.fake_agent", request.param],
                         env={"HOME": str(tmp_path)}, cwd=tmp_path, home=tmp_path)
    pane = AgentPane(muxd_server, launch, session=request.param, size=(70, 20))
    try:
        yield pane.start(from_shell=True)
    finally:
        pane.close()


def send(pane: AgentPane, line: str) -> None:
    """Type a command and Enter, marking the published states from here on."""
    pane.mark()
    pane.press(*([line] if line else []), "Enter")


def idle_at_start(pane: AgentPane, agent_type: str, model: str) -> None:
    idle = pane.wait_for("Idle", lambda s: s["session"]["model"], what="Idle with the model")
    with pane.explained("first Idle"):
        assert (idle["agent_type"], idle["is_agent"], idle["is_awaiting_input"]) == (agent_type, True, True)
        assert idle["session"]["model"] == model


def thinks(pane: AgentPane, description: str | None) -> dict:
    """Send `think`; the first Thinking state published for it."""
    send(pane, "think")
    thinking = pane.wait_for("Thinking")
    with pane.explained("Thinking"):
        assert thinking["activity"]["description"] == description
    return thinking


def asks(pane: AgentPane, tool: str | None, prompt: str, options: list[str]) -> dict:
    """Send `tool`; the state published for the approval dialog it brings up."""
    send(pane, "tool")
    asking = pane.wait_for("AwaitingConfirmation")
    with pane.explained("approval dialog"):
        assert (asking["is_awaiting_confirmation"], asking["is_awaiting_input"]) == (True, False)
        assert asking["tool"] == tool
        assert asking["confirmation"] == {"prompt": prompt, "options": options}
    return asking


def approved_tool_runs_and_counts_once(pane: AgentPane, answer: str, tool: str) -> None:
    send(pane, answer)
    running = pane.wait_for("ToolUse")
    with pane.explained("ToolUse"):
        assert running["tool"] == tool
    done = pane.wait_for("Idle")
    with pane.explained("Idle after the tool"):
        assert done["recent_tools"] == [tool]


def exits(pane: AgentPane) -> dict:
    send(pane, "quit")
    exited = pane.wait_for("Exited")
    with pane.explained("Exited"):
        assert exited["is_agent"] is True and exited["is_awaiting_input"] is False
    return exited


@pytest.mark.parametrize("fake", ["claude"], indirect=True)
def test_fake_claude_through_a_turn_a_permission_prompt_and_exit(fake):
    idle_at_start(fake, "claude", "Opus 5.5")

    thinking = thinks(fake, "Gusting")
    with fake.explained("Thinking"):
        assert thinking["session"]["tokens_used"] >= 12 and thinking["activity"]["elapsed_s"] >= 1
    fake.wait_for("Idle")

    asks(fake, "Bash", "Do you want to proceed?",
         ["1. Yes", "2. Yes, and don't ask again for mkdir commands in /tmp/work", "3. No"])
    assert fake.summary()["context"]["is_awaiting_confirmation"] is True
    send(fake, "1")
    done = fake.wait_for("Idle")
    with fake.explained("Idle after the tool"):
        assert done["recent_tools"] == ["Bash"] and done["evidence"]["detector"] == "claude"

    exits(fake)


@pytest.mark.parametrize("fake", ["codex"], indirect=True)
def test_fake_codex_through_a_turn_an_approval_and_exit(fake):
    idle_at_start(fake, "codex", codex.MODEL)

    thinking = thinks(fake, "Working")
    with fake.explained("Thinking"):
        assert thinking["activity"]["elapsed_s"] is not None  # `(0s • esc to interrupt)` at first
    fake.wait_for("Generating", what="Generating while `• Sure! …` streams")
    fake.wait_for("Idle", what="Idle after `Worked for …`")

    asks(fake, "exec_command", "Would you like to run the following command?", [
        "1. Yes, proceed (y)", "2. Yes, and don't ask again for commands that start with `mkdir -p demo` (p)",
        "3. No, and tell Codex what to do differently (esc)"])
    approved_tool_runs_and_counts_once(fake, "", "exec_command")  # Enter on the highlighted `Yes, proceed`

    exited = exits(fake)
    with fake.explained("exit summary"):
        assert exited["session"]["tokens_used"] == 2 * codex.TOKENS_PER_TURN
        assert exited["session"]["id"] == codex.SESSION_ID


@pytest.mark.parametrize("fake", ["gemini"], indirect=True)
def test_fake_gemini_through_a_turn_a_confirmation_and_exit(fake):
    idle_at_start(fake, "gemini", gemini.MODEL)

    thinking = thinks(fake, "Thinking...")
    with fake.explained("Thinking"):
        assert thinking["activity"]["elapsed_s"] is not None  # `(esc to cancel, 0s)` at first
    generating = fake.wait_for("Generating", what="Generating while `✦ Sure! …` streams")
    with fake.explained("Generating"):
        assert generating["activity"]["description"] == "Thinking..."
    fake.wait_for("Idle")

    asks(fake, "Shell", "Allow execution of [Shell]?",
         ["1. Allow once", "2. Allow for this session", "3. No, suggest changes (esc)"])
    approved_tool_runs_and_counts_once(fake, "1", "Shell")

    exited = exits(fake)
    with fake.explained("goodbye box"):
        assert (exited["session"]["id"], exited["session"]["model"]) == (gemini.SESSION_ID, gemini.MODEL)


@pytest.mark.parametrize("fake", ["aider"], indirect=True)
def test_fake_aider_through_a_turn_a_new_file_question_and_exit(fake):
    idle_at_start(fake, "aider", aider.MODEL)

    thinking = thinks(fake, f"Waiting for {aider.MODEL}")
    with fake.explained("Thinking"):
        assert thinking["activity"]["elapsed_s"] is None  # Aider's bar shows no clock
    fake.wait_for("Generating", what="Generating while the reply streams")
    done = fake.wait_for("Idle")
    with fake.explained("Idle after the turn"):
        assert done["session"]["tokens_used"] == sum(aider.THINK_TOKENS)

    # Aider names no tool when it asks; the edit counts once applied (`Applied edit to …`).
    asking = asks(fake, None, "Create new file? (Y)es/(N)o [Yes]:", ["Yes", "No"])
    with fake.explained("tokens while asking"):
        assert asking["session"]["tokens_used"] == sum(aider.EDIT_TOKENS)
    send(fake, "y")
    done = fake.wait_for("Idle")
    with fake.explained("Idle after the edit"):
        assert done["session"]["tokens_used"] == sum(aider.EDIT_TOKENS)
        assert done["recent_tools"] == ["Edit"]

    exited = exits(fake)
    with fake.explained("Exited"):
        assert exited["session"]["model"] == aider.MODEL


DECLINE_ANSWERS = {"claude": "3", "codex": "3", "gemini": "3", "aider": "n"}


@pytest.mark.parametrize("fake", ["claude", "aider", "codex", "gemini"], indirect=True)
def test_a_declined_tool_leaves_the_fake_idle_with_nothing_counted(fake):
    fake.wait_for("Idle")
    send(fake, "tool")
    fake.wait_for("AwaitingConfirmation")
    send(fake, DECLINE_ANSWERS[fake.session])
    declined = fake.wait_for("Idle")
    with fake.explained("Idle after declining"):
        assert declined["is_awaiting_confirmation"] is False and declined["confirmation"] is None
        assert declined["recent_tools"] == []


@pytest.mark.parametrize("fake_from_shell", ["claude", "codex", "gemini", "aider"], indirect=True)
def test_a_fake_quit_back_to_its_shell_leaves_the_shell_reported(fake_from_shell):
    pane = fake_from_shell
    agent = pane.session
    pane.wait_for("Idle", lambda s: s["agent_type"] == agent, what=f"{agent} at its prompt")
    mark = pane.cursor
    send(pane, "quit")
    shell = pane.wait_for("Idle", lambda s: s["agent_type"] == "shell", what="the shell back in front")
    with pane.explained("after quitting", mark):
        assert shell["is_agent"] is False and shell["evidence"]["detector"] == "shell"
        lies = [s for s in pane.states.since(mark)
                if s["agent_type"] == agent and s["activity"]["state"] in ("Idle", "Exited")]
        assert lies == [], "the agent is gone, the pane itself runs on"
    # The agent's exit screen cleared away: still the shell (not the agent kept for a redraw).
    mark = pane.mark()
    pane.press("clear", "Enter")
    pane.server.wait_for_text(pane.pane_id, "$" if "$" in pane.screen() else "#")
    pane.press("echo", "Space", "hello", "Enter")
    pane.server.wait_for_text(pane.pane_id, "hello")
    with pane.explained("after clear", mark):
        assert pane.agent()["agent_type"] == "shell"
        assert all(s["agent_type"] == "shell" for s in pane.states.since(mark))
