"""Execution records as the seeds' tools return them: times in ISO 8601 (UTC), durations in
seconds (seed 000) or milliseconds (seed 003), field for field as the seeds' examples."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from muxd.errors import BadRequest
from muxd.executions.record import COST_DECIMALS, Execution
from muxd.mcp_server.execution_schemas import (
    AgentSummaryCountsOutput, CommandsOutput, CountsOutput, ErrorPatternOutput, ExecutionDetailOutput,
    ExecutionErrorOutput, ExecutionRowOutput, FailureOutput, TaskRowOutput,
)
from muxd.store.execution_store import AgentStats, ErrorPattern

MESSAGE_PREVIEW_CHARS = 200  # a list row shows the start of a long prompt


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_iso(field: str, text: str | None) -> float | None:
    """An ISO 8601 time (a bare date or a time without zone is UTC) as epoch seconds."""
    if text is None:
        return None
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"{field} must be an ISO 8601 time such as 2026-11-24T10:00:00Z, got {text!r}",
                         field=field) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def preview(text: str | None, limit: int = MESSAGE_PREVIEW_CHARS) -> str | None:
    """The start of a long text, `limit` characters at most (the last one an ellipsis)."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit - 1] + "…"


def error_dict(e: Execution) -> ExecutionErrorOutput | None:
    if e.error is None:
        return None
    return {"type": e.error.type, "message": e.error.message, "stack_hash": e.error.stack_hash}


def summary_row(e: Execution) -> ExecutionRowOutput:
    """A row of list_recent_executions (seed 000 R1.2)."""
    return {
        "id": e.id, "agent_name": e.agent_name, "status": e.status, "triggered_by": e.triggered_by,
        "message": preview(e.message), "started_at": iso(e.started_at), "completed_at": iso(e.completed_at),
        "duration_seconds": _seconds(e.duration_ms), "cost_usd": e.cost_usd, "cost_source": e.cost_source,
        "has_error": e.error is not None, "pane_id": e.pane_id, "agent_type": e.agent_type, "kind": e.kind,
        "task_id": e.task_id, "trace_id": e.trace_id, "principal": e.principal, "host": e.host,
    }


def detail(e: Execution, transcript: str | None = None, include_transcript: bool = False) -> ExecutionDetailOutput:
    """get_execution_result's `execution` (seed 000 R2.2), with muxd's further fields."""
    record: ExecutionDetailOutput = {
        "id": e.id, "agent_name": e.agent_name, "status": e.status, "message": e.message,
        "response": e.response, "error": error_dict(e), "started_at": iso(e.started_at),
        "completed_at": iso(e.completed_at), "duration_seconds": _seconds(e.duration_ms), "cost_usd": e.cost_usd,
        "cost_source": e.cost_source, "cost_model": e.cost_model, "cost_price_date": e.cost_price_date, "principal": e.principal,
        "host": e.host,
        "context_used": e.context_used, "context_max": e.context_max, "tool_calls": list(e.tool_calls),
        "pane_id": e.pane_id, "agent_type": e.agent_type, "kind": e.kind, "triggered_by": e.triggered_by,
        "queued_at": iso(e.queued_at), "tokens_used": e.tokens_used, "files_written": list(e.files_written),
        "exit_code": e.exit_code, "session_id": e.session_id, "task_id": e.task_id, "trace_id": e.trace_id,
        "span_id": e.span_id, "attempt": e.attempt, "idempotency_key": e.idempotency_key,
        "sources": dict(e.sources), "transcript_bytes": e.transcript_bytes,
        "transcript_truncated": e.transcript_truncated,
    }
    if include_transcript:
        record["transcript"] = transcript if transcript is not None else ""
    return record


def task_row(e: Execution) -> TaskRowOutput:
    """A row of tasks_list / tasks_by_trace / tasks_last_failed (seed 003's output schema).
    muxd keeps no retrieval memory of its own: `retrieval` is empty, `backfilled` false."""
    return {
        "id": e.id, "task_id": e.task_id, "task_slug": e.task_id, "task_name": preview(e.message),
        "status": e.status, "started_at": iso(e.started_at), "ended_at": iso(e.completed_at),
        "duration_ms": e.duration_ms, "trace_id": e.trace_id, "span_id": e.span_id, "attempt": e.attempt,
        "error": error_dict(e), "retrieval": {"memory_count": 0, "source": []},
        "io": {"files_written": list(e.files_written)}, "backfilled": False,
        "agent_name": e.agent_name, "pane_id": e.pane_id, "principal": e.principal, "host": e.host,
    }


def pattern_row(p: ErrorPattern) -> ErrorPatternOutput:
    return {"stack_hash": p.stack_hash, "count": p.count, "first_seen": iso(p.first_seen),
            "last_seen": iso(p.last_seen), "example_task_id": p.example_task_id,
            "example_trace_id": p.example_trace_id, "error_type": p.error_type, "message": p.message,
            "example_execution_id": p.example_id}


def rate(successful: int, total: int) -> float | None:
    """Percent of `total` that succeeded, one decimal (seed 000: 38 of 42 is 90.5)."""
    return round(100.0 * successful / total, 1) if total else None


def failure_row(e: Execution) -> FailureOutput:
    """A recent failure in get_agent_activity_summary (seed 000 R3.2), with its exact status
    (failed, timeout or interrupted) and kind (an agent's prompt, or a command)."""
    return {"id": e.id, "agent_name": e.agent_name, "message": preview(e.message),
            "error": e.error.message if e.error is not None else e.status, "failed_at": iso(e.completed_at),
            "status": e.status, "kind": e.kind}


def cost_sum(stats: Iterable[AgentStats]) -> dict[str, Any]:
    """`total_cost_usd` over the executions whose cost is known (None when none is: a sum of
    unknowns is unknown, not zero) and `cost_known_executions`, how many that sum covers."""
    known = [s for s in stats if s.total_cost_usd is not None and s.cost_known_executions]
    total = round(sum(s.total_cost_usd or 0.0 for s in known), COST_DECIMALS) if known else None
    return {"total_cost_usd": total, "cost_known_executions": sum(s.cost_known_executions for s in known)}


def counts(stats: Iterable[AgentStats]) -> CountsOutput:
    """Executions by outcome over `stats`: `failed` is the failure family (failed, timeout,
    interrupted), never cancelled ones."""
    stats = list(stats)
    total, successful = sum(s.total for s in stats), sum(s.successful for s in stats)
    return {"total_executions": total, "successful": successful, "failed": sum(s.failed for s in stats),
            "cancelled": sum(s.cancelled for s in stats), "running": sum(s.running for s in stats),
            "pending": sum(s.pending for s in stats), "success_rate": rate(successful, total)}


def agent_summary(s: AgentStats) -> AgentSummaryCountsOutput:
    return {
        **counts([s]), **cost_sum([s]), "total_tokens": s.total_tokens,
        "avg_duration_seconds": None if s.avg_duration_s is None else round(s.avg_duration_s, 3),
        "last_execution_at": iso(s.last_execution_at), "last_execution_status": s.last_execution_status,
    }


def commands_summary(stats: list[AgentStats]) -> CommandsOutput:
    """The commands (muxd run windows, lines run in a shell): counted apart from agents' work."""
    return {**counts(stats), "panes": len({s.agent_name for s in stats})}
