"""Agent state changes and execution ends as events (muxd/daemon/attention/agent_events.py), and
the board of who needs a person they keep (board.py), on real AgentState and Execution records."""

from __future__ import annotations

from types import SimpleNamespace

from muxd.daemon.attention.agent_events import execution_events, state_events
from muxd.daemon.attention.board import AttentionBoard
from muxd.daemon.attention.service import Attention
from muxd.detectors.state import Activity, AgentState, Confirmation
from muxd.executions.record import Execution, ExecutionError


def pane(pane_id: str = "%1"):
    session = SimpleNamespace(name="work", id="$0")
    window = SimpleNamespace(id="@1", index=2, name="claude", session=session)
    return SimpleNamespace(id=pane_id, window=window)


def agent(state: str, **fields) -> AgentState:
    return AgentState(agent_type="claude", is_agent=True, activity=Activity(state=state), **fields)


def kinds(events):
    return [e.kind for e in events]


def test_a_confirmation_is_an_event_with_its_question_and_its_place():
    before = agent("ToolUse", tool="Bash")
    after = agent("AwaitingConfirmation", tool="Bash", tool_input="rm -rf build",
                  confirmation=Confirmation(prompt="Do you want to proceed?\n  rm -rf build", options=["1. Yes"]))
    events = state_events(pane(), before, after, 100.0)
    assert kinds(events) == ["agent-state", "agent-waiting"]
    waiting = events[1]
    assert waiting.question == "Do you want to proceed? rm -rf build"
    assert (waiting.pane_id, waiting.window_index, waiting.session, waiting.at) == ("%1", 2, "work", 100.0)
    assert (waiting.state, waiting.previous, waiting.agent_type) == ("AwaitingConfirmation", "ToolUse", "claude")
    # A tool's dialog with no question drawn is asked as the tool and its input.
    assert state_events(pane(), before, agent("AwaitingConfirmation", tool="Bash", tool_input="ls"),
                        1.0)[1].question == "Bash: ls"


def test_a_turn_that_ends_is_agent_idle_but_a_spinner_tick_is_nothing():
    assert kinds(state_events(pane(), agent("Generating"), agent("Idle"), 1.0)) == ["agent-state", "agent-idle"]
    assert state_events(pane(), agent("Thinking"), agent("Thinking", session=agent("Idle").session), 1.0) == []
    # A program that is no agent has no agent events; Unknown to Idle is no ended turn.
    assert state_events(pane(), AgentState(), AgentState(activity=Activity(state="Idle")), 1.0) == []
    assert kinds(state_events(pane(), agent("Unknown"), agent("Idle"), 1.0)) == ["agent-state"]


def test_an_execution_ending_failed_is_agent_failed_too():
    failed = Execution(id="e1", pane_id="%1", pane_key="k", agent_name="w", agent_type="claude", status="failed",
                       error=ExecutionError(type="api_error", message="API Error: 500", stack_hash="h"))
    events = execution_events(failed, pane(), 5.0)
    assert kinds(events) == ["execution-finished", "agent-failed"]
    assert events[0].status == "failed" and events[0].error == "api_error" and events[0].execution_id == "e1"
    assert events[1].error == "API Error: 500"
    shell = Execution(id="e2", pane_id="%9", pane_key="k", agent_name="w", agent_type="shell", status="failed")
    events = execution_events(shell, None, 5.0)  # a shell command, its pane gone
    assert kinds(events) == ["execution-finished"] and events[0].pane_id == "%9" and events[0].session is None


def test_the_board_keeps_one_need_per_pane_until_it_is_over_or_seen():
    viewed: set[str] = set()
    attention = Attention(find_pane=lambda pane_id: None)
    attention.board.viewed = viewed.__contains__
    board: AttentionBoard = attention.board
    one, two = pane("%1"), pane("%2")
    dialog = agent("AwaitingConfirmation", confirmation=Confirmation(prompt="Proceed?"))
    attention.agent_changed(one, agent("ToolUse"), dialog)
    assert board.need("%1").kind == "waiting" and board.need("%1").text == "Proceed?"
    assert board.flags(["%1", "%2"]) == "?"
    attention.agent_changed(one, dialog, agent("ToolUse"))  # answered: no longer waiting
    assert board.need("%1") is None
    attention.agent_changed(one, agent("ToolUse"), agent("Idle"))
    attention.agent_changed(two, agent("Thinking"), agent("Idle"))
    assert board.flags(["%1", "%2"]) == "+" and board.counts(["%1", "%2"])["finished"] == 2
    assert board.seen(["%1"]) and board.need("%1") is None and board.need("%2").kind == "finished"
    attention.agent_changed(two, agent("Idle"), agent("Thinking"))  # its next turn: the news is old
    assert board.need("%2") is None
    # A turn that ends while someone looks at it is no news.
    viewed.add("%2")
    attention.agent_changed(two, agent("Thinking"), agent("Idle"))
    assert board.need("%2") is None
    # A failed turn outranks nothing live: a pane waiting stays waiting.
    attention.agent_changed(one, agent("Idle"), dialog)
    attention.execution_ended(Execution(id="e", pane_id="%1", pane_key="k", agent_name="w", agent_type="claude", status="failed",
                                        error=ExecutionError(type="api_error", message="boom", stack_hash="h")))
    assert board.need("%1").kind == "waiting"
    attention.execution_ended(Execution(id="f", pane_id="%3", pane_key="k", agent_name="w", agent_type="codex", status="timeout"))
    assert board.need("%3").kind == "failed" and board.need("%3").execution_id == "f"
    assert board.flags(["%1", "%3"]) == "?X"
    attention.pane_gone("%3")
    assert board.need("%3") is None


def test_a_listener_that_raises_costs_its_event_not_the_bus():
    attention = Attention(find_pane=lambda pane_id: None)
    heard = []

    def broken(event):
        raise RuntimeError("a bug")

    attention.bus.listen(broken)
    attention.bus.listen(heard.append)
    attention.publish("session-created", session="work", session_id="$0")
    assert kinds(heard) == ["session-created"] and heard[0].session == "work" and heard[0].pane_id is None
