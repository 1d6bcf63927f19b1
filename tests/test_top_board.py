"""`muxd top`'s rows and frame (muxd/cli/top_board.py, top_frame.py): the attention board's
order, the question in WHAT, executions matched to their panes, columns fitted to the width."""

from __future__ import annotations

from muxd.cli.top_board import agent_rows, executions_by_pane
from muxd.cli.top_frame import frame_lines
from muxd.detectors.state import Activity, AgentSession, AgentState, Confirmation
from muxd.executions.record import Execution
from muxd.protocol.messages import PaneInfo

NOW = 10_000.0


def pane(number: int, state: str, *, attention: str | None = None, since: float = NOW - 5, text: str | None = None,
         agent: str | None = "claude", session: str = "s") -> PaneInfo:
    confirmation = Confirmation(prompt="Do you want to proceed?") if state == "AwaitingConfirmation" else None
    return PaneInfo(id=f"%{number}", session=session, session_id="$0", window=number, window_id=f"@{number}",
                    window_name="w", index=0, name=f"p{number}", tags=[], command=["x"], pid=1, foreground=None,
                    cwd=None, width=80, height=24, status="running", exit_code=None, created_at=NOW - 100, title="",
                    active=True, attention=attention, attention_since=since if attention else None, attention_text=text,
                    agent=AgentState(pane_id=f"%{number}", agent_type=agent, is_agent=agent is not None,
                                     activity=Activity(state=state, since=since), confirmation=confirmation,
                                     session=AgentSession(tokens_used=4800, cost_usd=None)))


def execution(number: int, pane_id: str, status: str, started: float, cost: float | None = None,
              **extra: object) -> Execution:
    return Execution(id=f"exec_{number}", pane_id=pane_id, pane_key=f"run/{pane_id}", agent_name=pane_id,
                     status=status, started_at=started, cost_usd=cost, **extra)  # type: ignore[arg-type]


def test_rows_follow_the_attention_board_then_busy_then_the_rest():
    panes = [pane(1, "Idle"), pane(2, "Thinking"), pane(3, "Idle", attention="finished"),
             pane(4, "AwaitingConfirmation", attention="waiting", since=NOW - 3, text="Do you want to proceed?"),
             pane(5, "AwaitingConfirmation", attention="waiting", since=NOW - 60, text="Edit a.py?"),
             pane(6, "Idle", attention="failed", text="api_error: overloaded"), pane(7, "Idle", agent=None)]
    rows = agent_rows(panes, {}, NOW)
    assert [r.pane_id for r in rows] == ["%5", "%4", "%6", "%3", "%2", "%1"]  # who waited longest first; no shell
    by_id = {r.pane_id: r for r in rows}
    assert by_id["%4"].cells[3:6] == ("waiting", "3s", "Do you want to proceed?")
    assert by_id["%6"].cells[5] == "api_error: overloaded" and by_id["%1"].cells[6] == "4.8k"


def test_executions_go_to_their_pane_the_running_one_first_and_never_a_past_runs():
    panes = [pane(1, "Thinking"), pane(2, "Idle")]
    recent = [execution(1, "%1", "success", NOW - 50, cost=0.5), execution(2, "%2", "success", NOW - 500),
              execution(3, "%2", "failed", NOW - 20, cost=0.25)]
    active = [execution(4, "%1", "running", NOW - 5)]
    found = executions_by_pane(panes, recent, active)
    assert found["%1"].id == "exec_4" and found["%2"].id == "exec_3"
    assert executions_by_pane(panes, [execution(9, "%1", "success", NOW - 500)], []) == {}  # older than the pane
    row = agent_rows([panes[1]], found, NOW)[0]
    assert row.cells[7:] == ("$0.25", "exec_3") and row.execution_id == "exec_3"
    estimated = execution(5, "%2", "success", NOW - 20, cost=0.25, cost_source="estimate")
    assert agent_rows([panes[1]], {"%2": estimated}, NOW)[0].cells[7] == "~$0.25"  # muxd's estimate, not the agent's


def test_a_narrow_frame_drops_columns_and_cuts_the_question_but_keeps_what_matters():
    panes = [pane(4, "AwaitingConfirmation", attention="waiting", text="Do you want to proceed with a very long "
                  "command that goes on and on and on?")]
    rows = agent_rows(panes, {"%4": execution(1, "%4", "running", NOW - 5)}, NOW)
    wide = frame_lines(rows, "%4", 200, 10, color=False)
    assert wide[0] == "muxd top · 1 agent · 1 waiting" and "EXEC" in wide[1] and "goes on and on" in wide[2]
    narrow = frame_lines(rows, "%4", 50, 10, color=False)
    assert len(narrow) == 10 and all(len(line) <= 50 for line in narrow)
    assert narrow[1].split() == ["PANE", "WHERE", "AGENT", "STATE", "FOR", "WHAT"]  # EXEC and TOKENS went
    assert narrow[2].startswith("%4 p4  s:4    claude  waiting")
    assert narrow[2].endswith("…") and len(narrow[2]) == 50 and narrow[-1].startswith("↑↓/jk select")
    coloured = frame_lines(rows, "%4", 50, 10)
    assert "\x1b[7m" in coloured[2] and "\x1b[1;31m" in coloured[2]  # selected, and waiting's red
