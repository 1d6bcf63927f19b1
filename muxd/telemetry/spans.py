"""The spans muxd records, as plain values: one per ended execution, one per check of a task.
Pure: the OTLP export (otlp.py) turns them into the SDK's spans; tests read them as they are.

Attribute names follow OpenTelemetry's semantic conventions where one exists (gen_ai.* for an
agent's turn, process.exit.code, error.type); muxd's own facts are under muxd.*. Prompts and
answers are not exported (the conventions keep content out unless asked for)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from muxd.executions.record import FAILED_STATUSES, Execution
from muxd.tasks.model import Task, VerificationResult
from muxd.telemetry.trace_ids import new_span_id, new_trace_id, task_trace_id

AttributeValue = str | int | float | bool

# The provider each agent CLI talks to by default (gen_ai.provider.name's values).
AGENT_PROVIDERS = {"claude": "anthropic", "codex": "openai", "gemini": "gcp.gemini"}


@dataclass(frozen=True)
class SpanRecord:
    name: str
    trace_id: str                      # 32 hex digits
    span_id: str                       # 16 hex digits
    start_s: float                     # epoch seconds
    end_s: float
    parent_span_id: str | None = None
    failed: bool = False               # status ERROR (else UNSET: OTel keeps OK for an explicit verdict)
    status_message: str | None = None
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    events: tuple[tuple[str, float], ...] = ()  # (name, epoch seconds)


def _present(pairs: dict[str, AttributeValue | None]) -> dict[str, AttributeValue]:
    return {k: v for k, v in pairs.items() if v is not None}


def _program(command_line: str | None) -> str:
    """The program a command line starts, for the span's name (a name, not the line: few values)."""
    try:
        words = shlex.split(command_line or "")
    except ValueError:
        words = (command_line or "").split()
    # A task's check is "( line ) && ( line )": its first program is after the parenthesis.
    words = [w for w in words if w.strip("(){}!;&|")]
    return os.path.basename(words[0]) if words else "command"


def execution_span(e: Execution, parent_span_id: str | None = None) -> SpanRecord | None:
    """The span of ended execution `e` (None for one that never had a time): its own trace and
    span ids when it was given them, new ones otherwise; from its submission to its end."""
    start = e.queued_at if e.queued_at is not None else e.started_at
    if start is None or e.completed_at is None:
        return None
    failed = e.status in FAILED_STATUSES
    prompt = e.kind == "prompt"
    attributes = _present({
        "muxd.execution.id": e.id, "muxd.execution.kind": e.kind, "muxd.execution.status": e.status,
        "muxd.execution.triggered_by": e.triggered_by, "muxd.execution.principal": e.principal,
        "muxd.execution.attempt": e.attempt, "muxd.execution.tokens": e.tokens_used,
        "muxd.execution.cost_usd": e.cost_usd, "muxd.execution.tool_calls": len(e.tool_calls) or None,
        "muxd.execution.cost_source": e.cost_source,
        "muxd.pane.id": e.pane_id, "muxd.pane.key": e.pane_key,
        "muxd.agent.name": e.agent_name, "muxd.agent.type": e.agent_type,
        "muxd.task.id": e.task_id,
        "gen_ai.operation.name": "invoke_agent" if prompt else None,
        "gen_ai.agent.name": e.agent_name if prompt else None,
        "gen_ai.provider.name": AGENT_PROVIDERS.get(e.agent_type or "") if prompt else None,
        "gen_ai.conversation.id": e.session_id,
        "gen_ai.response.model": e.cost_model,
        "process.exit.code": e.exit_code,
        "error.type": e.error.type if e.error is not None and failed else None,
    })
    events = (("muxd.execution.started", e.started_at),) if e.started_at is not None and e.started_at > start else ()
    return SpanRecord(
        name=f"invoke_agent {e.agent_name}" if prompt else f"command {_program(e.message)}",
        trace_id=e.trace_id or new_trace_id(), span_id=e.span_id or new_span_id(), parent_span_id=parent_span_id,
        start_s=start, end_s=max(start, e.completed_at), failed=failed,
        status_message=(e.error.message if e.error is not None else e.status) if failed else None,
        attributes=attributes, events=events)


@dataclass(frozen=True)
class Check:
    """A check of a task muxd runs (task_verify.py), begun: its span's ids, given to its execution."""

    task: Task
    trace_id: str
    span_id: str
    started_at: float

    @classmethod
    def begin(cls, task: Task, now: float) -> Check:
        return cls(task=task, trace_id=task_trace_id(task.id) or new_trace_id(), span_id=new_span_id(),
                   started_at=now)


def check_span(check: Check, result: VerificationResult | None, now: float) -> SpanRecord:
    """The span of a task's check, from its start to its verdict (None: the daemon stopped during
    it, and runs it again when it starts): ERROR unless it passed."""
    task = check.task
    if result is None:
        status, message, execution_id, exit_code = "interrupted", "the daemon stopped during the check", None, None
    else:
        status, execution_id, exit_code = result.status, result.execution_id, result.exit_code
        message = f"the check {status}" + ("" if exit_code is None else f" (exit {exit_code})")
    failed = status != "passed"
    return SpanRecord(
        name="verify_task", trace_id=check.trace_id, span_id=check.span_id, start_s=check.started_at,
        end_s=max(check.started_at, now), failed=failed, status_message=message if failed else None,
        attributes=_present({
            "muxd.task.id": task.id, "muxd.task.plan": task.plan,
            "muxd.task.verification.kind": task.verification.kind,
            "muxd.task.verification.status": status, "muxd.execution.id": execution_id,
            "process.exit.code": exit_code,
        }))
