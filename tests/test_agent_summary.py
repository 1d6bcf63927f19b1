"""`agent_summary` (daemon/commands/agents.py): the summary an orchestrator reads, built from the
pane's AgentState: the confirmation asked, the error shown, the session id and its readers."""

from __future__ import annotations

from types import SimpleNamespace

import msgspec
import pytest

from muxd.daemon.panes import session_ids
from muxd.daemon.commands.agents import agent_summary
from muxd.detectors.provenance import STATE_STALE_S
from muxd.detectors.state import Activity, AgentError, AgentSession, AgentState, Confirmation, Provenance, UsageLimit


def pane(state: AgentState) -> SimpleNamespace:
    return SimpleNamespace(id="%3", agent=state, tags=["w"], cwd=lambda: "/tmp/work")


ASKING = AgentState(pane_id="%3", agent_type="codex", is_agent=True,
                    activity=Activity(state="AwaitingConfirmation", since=100.0), tool="exec_command",
                    is_awaiting_confirmation=True,
                    confirmation=Confirmation(prompt="Would you like to run the following command?",
                                              options=["1. Yes, proceed (y)", "2. No (esc)"]))


def test_the_confirmation_names_its_question_options_and_tool():
    summary = msgspec.to_builtins(agent_summary(pane(ASKING), now=103.0))
    assert summary["confirmation"] == {"prompt": "Would you like to run the following command?",
                                       "options": ["1. Yes, proceed (y)", "2. No (esc)"], "tool": "exec_command"}
    assert summary["error"] is None and summary["activity"]["duration_secs"] == 3


def test_no_confirmation_unless_awaiting_one_and_the_error_shown():
    # Claude's question picker carries options too, but asks no approval.
    error = AgentError(type="overloaded", message="529 Overloaded · retrying in 2s · attempt 3/10")
    state = msgspec.structs.replace(ASKING, activity=Activity(state="Thinking"), is_awaiting_confirmation=False,
                                    error=error)
    summary = msgspec.to_builtins(agent_summary(pane(state), now=0.0))
    assert summary["confirmation"] is None
    assert summary["error"] == {"type": "overloaded", "message": "529 Overloaded · retrying in 2s · attempt 3/10"}


@pytest.fixture
def readers(monkeypatch):
    registered: list = []
    monkeypatch.setattr(session_ids, "_readers", registered)
    return registered


def test_the_session_id_is_the_screens_else_a_readers(readers):
    asked = []

    def from_logs(p, state):
        asked.append(p.id)
        return "from-the-logs"

    session_ids.register_session_id_reader(lambda p, state: None)
    session_ids.register_session_id_reader(from_logs)
    shown = msgspec.structs.replace(ASKING, session=AgentSession(id="from-the-screen"))
    assert agent_summary(pane(shown), now=0.0).session.id == "from-the-screen"
    assert asked == []
    assert agent_summary(pane(ASKING), now=0.0).session.id == "from-the-logs"
    shell = AgentState(pane_id="%3", agent_type="shell", activity=Activity(state="Idle"))
    assert agent_summary(pane(shell), now=0.0).session.id is None
    assert asked == ["%3"], "no agent: no reader is asked"


def test_a_broken_reader_costs_its_answer_not_the_summary(readers):
    def broken(p, state):
        raise OSError("unreadable log")

    session_ids.register_session_id_reader(broken)
    session_ids.register_session_id_reader(lambda p, state: "next-one")
    assert agent_summary(pane(ASKING), now=0.0).session.id == "next-one"


def test_confidence_and_sources_say_where_each_field_came_from(readers):
    told = Provenance(source="hook", observed_at=101.0, detail="PreToolUse")
    seen = Provenance(source="screen", observed_at=100.0, detail="spinner")
    state = AgentState(pane_id="%3", agent_type="claude", is_agent=True,
                       activity=Activity(state="ToolUse", since=101.0), tool="Bash", tool_input="pytest -q",
                       session=AgentSession(model="opus"), background=1, confidence="certain",
                       sources={"state": told, "tool": told, "tool_input": told, "model": seen,
                                "input_text": seen})  # a field the summary does not carry is left out
    session_ids.register_session_id_reader(lambda p, s: "from-the-log")
    summary = msgspec.to_builtins(agent_summary(pane(state), now=102.0))
    assert summary["confidence"] == "certain" and summary["background"] == 1
    assert summary["activity"]["tool"] == "Bash" and summary["activity"]["tool_input"] == "pytest -q"
    assert summary["sources"] == {
        "state": {"source": "hook", "observed_at": 101.0, "detail": "PreToolUse"},
        "tool": {"source": "hook", "observed_at": 101.0, "detail": "PreToolUse"},
        "tool_input": {"source": "hook", "observed_at": 101.0, "detail": "PreToolUse"},
        "model": {"source": "screen", "observed_at": 100.0, "detail": "spinner"},
        "session_id": {"source": "session_log", "observed_at": 102.0, "detail": None},
    }
    # A busy state that nothing confirmed for a minute is stale.
    assert agent_summary(pane(state), now=101.0 + STATE_STALE_S + 1).confidence == "stale"


def test_a_usage_limit_gives_its_words_its_reset_and_its_dialog():
    limit = UsageLimit(message="You've hit your weekly limit · resets Dec 1, 6:41pm (UTC)", resets_at=1_796_150_460.0)
    told = Provenance(source="screen", observed_at=50.0, detail="usage-limit-dialog")
    state = msgspec.structs.replace(
        ASKING, agent_type="claude", activity=Activity(state="UsageLimited", since=50.0), tool=None,
        is_awaiting_confirmation=False, limit=limit, error=AgentError(type="usage_limit", message=limit.message),
        confirmation=Confirmation(prompt="What do you want to do?", options=["1. Stop and wait for limit to reset"]),
        sources={"state": told, "limit": told})
    summary = msgspec.to_builtins(agent_summary(pane(state), now=60.0))
    assert summary["activity"]["state"] == "UsageLimited"
    assert summary["limit"] == {"message": limit.message, "resets_at": 1_796_150_460.0}
    assert summary["sources"]["limit"]["detail"] == "usage-limit-dialog"
    # A dialog about the limit asks too: its question is there to answer.
    assert summary["confirmation"]["prompt"] == "What do you want to do?"
    assert not summary["context"]["is_awaiting_confirmation"]
    # No limit otherwise.
    assert msgspec.to_builtins(agent_summary(pane(ASKING), now=60.0))["limit"] is None


def test_a_usage_limit_in_a_few_words(local_zone):
    from muxd.mcp_server.summary_tools import agent_line
    from muxd.units import limit_text

    local_zone("UTC")
    assert limit_text(None, 0.0) == "usage limit"
    assert limit_text(7_200.0 + 1_800, 1_800.0) == "usage limit · resets 02:30 (in 2h)"
    assert limit_text(3 * 86_400.0, 0.0) == "usage limit · resets Jan 04 00:00 (in 3d)"
    limited = AgentState(pane_id="%3", agent_type="codex", is_agent=True,
                         activity=Activity(state="UsageLimited", since=0.0),
                         limit=UsageLimit(message="You've hit your usage limit", resets_at=3_600.0))
    line = agent_line(SimpleNamespace(id="%3", name="w1", agent=limited), 60.0)
    assert line == "%3 w1 codex UsageLimited 1m USAGE LIMIT · resets 01:00 (in 59m)"
