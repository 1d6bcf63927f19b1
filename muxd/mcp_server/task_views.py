"""Tasks, their events and knowledge as the task tools return them: camelCase field names, as
seed 001 names its arguments, and times in ISO 8601 (UTC)."""

from __future__ import annotations

from typing import Any, cast

from muxd.mcp_server.execution_views import iso, preview, summary_row
from muxd.mcp_server.task_schemas import ActionableOutput, KnowledgeOutput, TaskHistoryOutput, TaskOutput, TaskRowOutput
from muxd.protocol.task_messages import ActionableTask, TaskReply
from muxd.tasks.model import KnowledgeEntry, Review, Task, TaskEvent

DESCRIPTION_PREVIEW_CHARS = 500  # a list row shows the start of a long description


def task_row(task: Task) -> TaskRowOutput:
    """A task in a list: what a worker or an orchestrator decides on."""
    return {
        "taskId": task.id, "title": task.title, "description": preview(task.description, DESCRIPTION_PREVIEW_CHARS) or "", "state": task.state,
        "priority": task.priority, "planId": task.plan_id, "plan": task.plan,
        "verification": {"kind": task.verification.kind},
        "dependsOn": task.depends_on, "claimedBy": task.claimed_by, "leaseExpiresAt": iso(task.lease_expires_at),
        "attempts": task.attempts, "createdAt": iso(task.created_at), "updatedAt": iso(task.updated_at),
        "host": task.host,
    }


def task_detail(task: Task) -> TaskOutput:
    """A task in full."""
    result = task.verification_result
    return {  # type: ignore[typeddict-item]
        **task_row(task), "description": task.description,
        "verification": {"kind": task.verification.kind, "commands": task.verification.commands,
                         "cwd": task.verification.cwd,
                         "status": result.status if result else None,
                         "executionId": result.execution_id if result else None,
                         "exitCode": result.exit_code if result else None,
                         "output": result.output if result else None,
                         "at": iso(result.at) if result else None},
        "context": task.context, "output": task.output, "externalRef": task.external_ref,
        "claimedAt": iso(task.claimed_at), "leaseSec": task.lease_s, "lastError": task.last_error,
        "feedback": task.feedback, "createdBy": task.created_by, "completedAt": iso(task.completed_at),
    }


def knowledge_row(entry: KnowledgeEntry) -> KnowledgeOutput:
    return {"id": entry.id, "title": entry.title, "content": entry.content, "tags": entry.tags,
            "score": entry.score, "source": entry.source, "sourceTaskId": entry.source_task_id,
            "createdAt": iso(entry.created_at)}


def actionable_row(item: ActionableTask) -> ActionableOutput:
    return cast(ActionableOutput, {**task_row(item.task),
                                   "knowledge": {"references": [knowledge_row(k) for k in item.knowledge],
                                                 **({"searchFailed": True} if item.knowledge_error else {})}})


def event_row(event: TaskEvent) -> dict[str, Any]:
    return {"at": iso(event.at), "kind": event.kind, "actor": event.actor, "from": event.from_state,
            "to": event.to_state, "host": event.host, **({"detail": event.detail} if event.detail else {})}


def review_row(review: Review) -> dict[str, Any]:
    return {"at": iso(review.at), "reviewer": review.reviewer, "verdict": review.verdict, "comment": review.comment,
            "blocking": review.blocking, "resolvedAt": iso(review.resolved_at)}


def task_with_history(reply: TaskReply) -> TaskHistoryOutput:
    return cast(TaskHistoryOutput, {**task_detail(reply.task), "events": [event_row(e) for e in reply.events],
                                    "reviews": [review_row(r) for r in reply.reviews],
                                    "executions": [summary_row(e) for e in reply.executions]})
