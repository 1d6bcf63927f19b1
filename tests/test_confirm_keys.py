"""The keys that answer an agent's yes/no confirmation (muxd/detectors/confirm_keys.py): Enter on
a dialog's first option when it is a yes, Escape for no, y/n + Enter on Aider's line; a clear
refusal for a question, an agent at rest, a dialog that does not open on a yes, an unknown CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from muxd.detectors.confirm_keys import confirmation_keys
from muxd.detectors.state import Activity, AgentState, Confirmation
from muxd.errors import BadRequest


def asking(agent: str, *options: str, state: str = "AwaitingConfirmation") -> AgentState:
    return AgentState(pane_id="%3", agent_type=agent, is_agent=True, activity=Activity(state=state),
                      is_awaiting_confirmation=state == "AwaitingConfirmation",
                      confirmation=Confirmation(prompt="Do you want to proceed?", options=list(options)))


@pytest.mark.parametrize("agent, options", [
    ("claude", ["1. Yes", "2. Yes, and don't ask again", "3. No"]),
    ("codex", ["1. Yes, proceed (y)", "2. Yes, and don't ask again (p)", "3. No, and tell Codex (esc)"]),
    ("gemini", ["1. Allow once", "2. Allow for this session", "3. No, suggest changes (esc)"]),
    ("opencode", ["Allow once", "Allow always", "Reject"]),
])
def test_a_dialog_takes_enter_for_yes_and_escape_for_no(agent, options):
    state = asking(agent, *options)
    assert confirmation_keys(state, True) == ["Enter"]
    assert confirmation_keys(state, False) == ["Escape"]


def test_kilo_takes_enter_for_yes_and_escape_then_enter_for_no():
    # Kilo 7.7.9's Escape opens "Reject permission" (an optional message), which Enter sends
    state = asking("kilo", "Allow once", "Allow always", "Reject")
    assert confirmation_keys(state, True) == ["Enter"]
    assert confirmation_keys(state, False) == ["Escape", "Enter"]


def test_cline_takes_a_letter_alone():
    state = asking("cline", "Approve", "Deny")
    assert confirmation_keys(state, True) == ["y"]
    assert confirmation_keys(state, False) == ["n"]


def test_aider_takes_a_letter_and_enter():
    state = asking("aider", "Yes", "No")
    assert confirmation_keys(state, True) == ["y", "Enter"]
    assert confirmation_keys(state, False) == ["n", "Enter"]


@pytest.mark.parametrize("state, words", [
    (asking("claude", "1. Red", "2. Blue", state="AwaitingInput"), "asks a question, not yes or no"),
    (AgentState(pane_id="%3", agent_type="claude", is_agent=True, activity=Activity(state="Idle")),
     "is not waiting for a yes or no (it is Idle)"),
    (asking("claude", "1. Keep the old file", "2. Yes"), "opens on '1. Keep the old file', not a yes"),
    (asking("mystery", "1. Yes"), "does not know how mystery takes a yes or no"),
])
def test_what_is_no_yes_no_question_is_refused_in_one_line(state, words):
    with pytest.raises(BadRequest) as refused:
        confirmation_keys(state, True)
    assert words in refused.value.message and "%3" in refused.value.message
    assert "\n" not in refused.value.message


def test_an_agent_added_by_a_manifest_takes_the_keys_its_manifest_names(tmp_path, monkeypatch):
    agents = tmp_path / "muxd" / "agents"
    agents.mkdir(parents=True)
    mini = (Path(__file__).parent / "agent_manifests" / "mini.toml").read_text()
    (agents / "mini.toml").write_text(mini)
    (agents / "quiet.toml").write_text(mini.split("[confirm]")[0].replace('name = "mini"', 'name = "quiet"'))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert confirmation_keys(asking("mini", "1. Yes", "2. No"), True) == ["1", "Enter"]
    assert confirmation_keys(asking("mini", "1. Yes", "2. No"), False) == ["2", "Enter"]
    with pytest.raises(BadRequest, match="muxd does not know how quiet takes a yes or no"):
        confirmation_keys(asking("quiet", "1. Yes", "2. No"), True)


def test_an_option_is_chosen_by_the_keys_its_dialog_takes():
    from muxd.detectors.confirm_keys import option_keys

    claude = asking("claude", "1. Yes", "2. Yes, and don't ask again", "3. No")
    assert option_keys(claude, 0) == ["Enter"]
    assert option_keys(claude, 1) == ["2"]  # a digit alone answers at once in the real CLIs
    assert option_keys(claude, 2) == ["Escape"]
    assert option_keys(asking("aider", "Yes", "No"), 1) == ["n", "Enter"]
    question = asking("claude", "1. Red", "2. Blue", state="AwaitingInput")
    assert option_keys(question, 1) == ["2"]
    with pytest.raises(BadRequest, match="shows no option 4"):
        option_keys(claude, 3)
    with pytest.raises(BadRequest, match="cannot choose 'Allow always'"):
        option_keys(asking("opencode", "Allow once", "Allow always", "Reject"), 1)
