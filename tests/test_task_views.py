"""The MCP tools' rows of tasks, task events and executions say the host each came from (issue 30):
on a database a fleet shares, a fleet-wide answer tells where every row was made."""

from __future__ import annotations

from muxd.executions.record import Execution
from muxd.mcp_server.execution_views import detail, summary_row
from muxd.mcp_server.execution_views import task_row as execution_task_row
from muxd.mcp_server.task_views import event_row, task_detail, task_row
from muxd.tasks.model import Task, TaskEvent


def test_task_and_event_rows_carry_their_host() -> None:
    task = Task(id="t1", title="ship it", host="alpha", created_at=1.0, updated_at=1.0)
    assert task_row(task)["host"] == task_detail(task)["host"] == "alpha"
    claimed = TaskEvent(task_id="t1", at=2.0, kind="claimed", actor="agent:%1@beta", host="beta")
    assert event_row(claimed)["host"] == "beta"
    assert task_row(Task(id="t2", title="old"))["host"] is None  # a row from before hosts were kept


def test_execution_rows_carry_their_host() -> None:
    execution = Execution(id="exec_1_00000000", pane_id="%1", pane_key="r/%1", agent_name="a", host="beta")
    assert summary_row(execution)["host"] == detail(execution)["host"] == execution_task_row(execution)["host"] == "beta"
