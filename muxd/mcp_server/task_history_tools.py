"""The task-execution tools of seed 003: `tasks_list`, `tasks_by_trace`, `tasks_last_failed`.
Over the same history as the execution tools; rows in seed 003's shape (execution_views.task_row)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from pydantic import Field

from muxd.errors import Timeout
from muxd.mcp_server.execution_schemas import TasksByTraceOutput, TasksListOutput, TasksLastFailedOutput
from muxd.mcp_server.execution_tools import FAILED_FILTER
from muxd.mcp_server.execution_views import parse_iso, pattern_row, task_row
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.summary_tools import READ_ONLY
from muxd.protocol.execution_messages import ExecutionFailures, ListExecutions

LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX = 20, 100   # seed 003
FAILED_LIMIT_DEFAULT, FAILED_LIMIT_MAX = 10, 50
OFFSET_MAX = 1_000_000
UPSTREAM_TIMEOUT_S = 2.0  # seed 003: the daemon (these tools' upstream) answers within this, or the call fails

TaskId = Annotated[str | None, Field(description="only executions of this task (send_task task_id)", max_length=256)]


async def _ask(tool: str, message_type: type, **fields: Any) -> Any:
    """The daemon's reply to one request, or Timeout once UPSTREAM_TIMEOUT_S has passed."""
    try:
        return await asyncio.wait_for(current_client().call(message_type, **fields), UPSTREAM_TIMEOUT_S)
    except TimeoutError:
        raise Timeout(f"{tool}: the muxd daemon did not answer within {UPSTREAM_TIMEOUT_S:g} s",
                      tool=tool, timeout_s=UPSTREAM_TIMEOUT_S) from None


def register_task_history_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def tasks_list(
        task_id: TaskId = None,
        status: Annotated[Literal["success", "failed", "pending", "running", "cancelled", "timeout", "interrupted"] | None,
                          Field(description=FAILED_FILTER)] = None,
        limit: Annotated[int, Field(description="rows per page", ge=1, le=LIST_LIMIT_MAX)] = LIST_LIMIT_DEFAULT,
        since: Annotated[str | None, Field(description="ISO 8601 time: only executions started since",
                                           max_length=64)] = None,
        backfilled: Annotated[bool | None, Field(description="muxd records executions live: true matches none")] = None,
        offset: Annotated[int, Field(description="skip this many rows (pagination, with has_more)", ge=0,
                                     le=OFFSET_MAX)] = 0,
    ) -> TasksListOutput:
        """Task execution history, newest first, filtered; `total` and `has_more` for paging."""
        started = parse_iso("since", since)
        if backfilled:  # nothing in muxd's history was backfilled
            return {"executions": [], "total": 0, "has_more": False}
        reply = await _ask("tasks_list", ListExecutions, task_id=task_id, status=status, since=started,
                           limit=limit, offset=offset)
        rows = [task_row(e) for e in reply.executions]
        return {"executions": rows, "total": reply.total, "has_more": offset + len(rows) < reply.total}

    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def tasks_by_trace(
        trace_id: Annotated[str, Field(description="the correlation id given to send_task", min_length=1,
                                       max_length=256)],
    ) -> TasksByTraceOutput:
        """Every attempt of one traced task, by attempt: how often it was retried and how it ended."""
        reply = await _ask("tasks_by_trace", ListExecutions, trace_id=trace_id, limit=LIST_LIMIT_MAX)
        attempts = sorted(reply.executions, key=lambda e: (e.attempt or 0, e.started_at or e.queued_at or 0.0))
        return {"executions": [task_row(e) for e in attempts], "retry_count": max(0, len(attempts) - 1),
                "final_status": attempts[-1].status if attempts else None}

    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def tasks_last_failed(
        limit: Annotated[int, Field(description="failures to return", ge=1,
                                    le=FAILED_LIMIT_MAX)] = FAILED_LIMIT_DEFAULT,
        task_id: TaskId = None,
        unique_errors: Annotated[bool, Field(description="one failure per error pattern (stack_hash)")] = False,
    ) -> TasksLastFailedOutput:
        """The newest failures (status failed, timeout or interrupted: each row says which), and the
        error patterns they share (same stack_hash: same cause)."""
        reply = await _ask("tasks_last_failed", ExecutionFailures, task_id=task_id, limit=limit,
                           unique_errors=unique_errors)
        return {"failures": [task_row(e) for e in reply.failures],
                "error_patterns": [pattern_row(p) for p in reply.patterns]}
