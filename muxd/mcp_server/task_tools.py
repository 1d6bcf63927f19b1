"""The task queue tools (seed 001): the worker loop get_next_actionable → claim_task →
update_task_status → complete_task, and for orchestrators create_task, list_tasks, get_task,
review_task, search_knowledge and dispatch_tasks. Scopes (tasks:read, tasks:write) and the
queue's rules are the daemon's; arguments are bounded here as the seed gives them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from muxd.config import (
    KNOWLEDGE_SEARCH_LIMIT_MAX, KNOWLEDGE_TAGS_MAX, KNOWLEDGE_TEXT_MAX_CHARS, TASK_DEPENDS_MAX,
    TASK_LEARNINGS_MAX, TASK_LEASE_DEFAULT_S, TASK_LEASE_MAX_S, TASK_LEASE_MIN_S, TASK_LIST_LIMIT_DEFAULT,
    TASK_LIST_LIMIT_MAX, TASK_NEXT_LIMIT_DEFAULT, TASK_NEXT_LIMIT_MAX, TASK_PRIORITY_DEFAULT, TASK_PRIORITY_MAX,
    TASK_TEXT_MAX_CHARS, TASK_TITLE_MAX_CHARS, TASK_VERIFY_COMMANDS_MAX,
)
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.summary_tools import READ_ONLY, AnyHostPaneId, HostFilter
from muxd.mcp_server.task_schemas import (
    ClaimOutput, CompleteOutput, DispatchOutput, KnowledgeSearchOutput, NextActionableOutput, TaskHistoryOutput,
    TaskListOutput, TaskOutput, TaskStatusOutput,
)
from muxd.mcp_server.task_views import actionable_row, knowledge_row, task_detail, task_row, task_with_history
from muxd.protocol.task_messages import (
    ClaimTask, CompleteTask, CreateTask, DispatchTasks, GetTask, LearningSpec, ListTasks, NextActionable,
    ReviewTask, SearchKnowledge, UpdateTaskStatus, VerificationSpec,
)

WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)

TaskId = Annotated[str, Field(description="the task's id (a uuid)", min_length=1, max_length=256)]
Plan = Annotated[str | None, Field(description="a plan's id or name", max_length=256)]
TASK_OFFSET_MAX = 1_000_000
State = Literal["ready", "claimed", "in_progress", "needs_review", "done", "failed"]


class VerificationArg(BaseModel):
    """How a completed task is checked."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["none", "manual", "commands", "github_pr", "gitlab_mr"] = "none"
    commands: Annotated[list[Annotated[str, Field(max_length=TASK_TEXT_MAX_CHARS)]],
                        Field(description="kind=commands: shell lines run in a muxd pane as yours, all must "
                                          "exit 0; only for whoever may run commands (admin, not pane-bound)",
                              max_length=TASK_VERIFY_COMMANDS_MAX)] = []
    cwd: Annotated[str | None, Field(description="where the commands run", max_length=4096)] = None
    timeoutSec: Annotated[float | None, Field(description="the check's time limit", ge=1, le=86400)] = None


class LearningArg(BaseModel):
    """Something learned while doing the task, worth knowing for the next ones."""

    model_config = ConfigDict(extra="forbid")
    content: Annotated[str, Field(min_length=1, max_length=KNOWLEDGE_TEXT_MAX_CHARS)]
    title: Annotated[str | None, Field(max_length=TASK_TITLE_MAX_CHARS)] = None
    tags: Annotated[list[Annotated[str, Field(max_length=256)]], Field(max_length=KNOWLEDGE_TAGS_MAX)] = []


def register_task_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="tasks", risk="safe", annotations=READ_ONLY)
    async def get_next_actionable(
        limit: Annotated[int, Field(description="at most this many", ge=1, le=TASK_NEXT_LIMIT_MAX)] = \
            TASK_NEXT_LIMIT_DEFAULT,
        planId: Plan = None,
        priorityLte: Annotated[int | None, Field(description="only tasks with priority <= this", ge=0,
                                                 le=TASK_PRIORITY_MAX)] = None,
        host: HostFilter = None,
    ) -> NextActionableOutput:
        """The ready tasks to work on next, most urgent first (priority, then age), each with the
        knowledge relevant to it. Then claim_task one of them."""
        reply = await current_client().call(NextActionable, limit=limit, plan=planId, priority_lte=priorityLte,
                                            host=host)
        return {"tasks": [actionable_row(item) for item in reply.actionable], "count": len(reply.actionable)}

    @tools.tool(category="tasks", risk="moderate", annotations=IDEMPOTENT)
    async def claim_task(
        taskId: TaskId,
        leaseSec: Annotated[int, Field(description="how long the claim holds without a heartbeat",
                                       ge=TASK_LEASE_MIN_S, le=TASK_LEASE_MAX_S)] = TASK_LEASE_DEFAULT_S,
    ) -> ClaimOutput:
        """Claim a ready task for yourself (atomic: of racing agents exactly one wins). Claiming a
        task you hold returns your current lease. Keep it with update_task_status heartbeats."""
        reply = await current_client().call(ClaimTask, task_id=taskId, lease_s=leaseSec)
        return {**task_row(reply.task), "leaseSec": reply.task.lease_s, "claimed": reply.created}

    @tools.tool(category="tasks", risk="moderate", annotations=WRITES)
    async def update_task_status(
        taskId: TaskId,
        status: Annotated[Literal["in_progress", "needs_review"], Field(
            description="in_progress while working (a heartbeat), needs_review to ask a person")],
        heartbeat: Annotated[bool, Field(description="renew the lease (in_progress)")] = True,
        reason: Annotated[str | None, Field(description="why (needs_review: what the reviewer should look at)",
                                            max_length=TASK_TEXT_MAX_CHARS)] = None,
        context: Annotated[dict[str, Any] | None, Field(description="merged into the task's context")] = None,
        externalRef: Annotated[str | None, Field(description="a PR URL, a commit SHA", max_length=4096)] = None,
    ) -> TaskStatusOutput:
        """Report progress on a task you hold: in_progress (renews the lease) or needs_review."""
        reply = await current_client().call(UpdateTaskStatus, task_id=taskId, status=status, heartbeat=heartbeat,
                                            reason=reason, context=context, external_ref=externalRef)
        return {**task_row(reply.task), "context": reply.task.context, "externalRef": reply.task.external_ref}

    @tools.tool(category="tasks", risk="moderate", annotations=WRITES)
    async def complete_task(
        taskId: TaskId,
        output: Annotated[dict[str, Any] | None, Field(description="your result, free-form")] = None,
        learnings: Annotated[list[LearningArg], Field(description=f"up to {TASK_LEARNINGS_MAX} things learned; "
                                                                  "each becomes knowledge for later tasks",
                                                      max_length=TASK_LEARNINGS_MAX)] = [],
    ) -> CompleteOutput:
        """Finish a task you hold. Its verification decides: none → done; manual → needs_review until
        approved; commands/github_pr/gitlab_mr → needs_review while muxd runs the check. Learnings past
        your knowledge quota are not stored (the task completes all the same): `learnings` says."""
        reply = await current_client().call(
            CompleteTask, task_id=taskId, output=output,
            learnings=[LearningSpec(content=item.content, title=item.title, tags=item.tags) for item in learnings])
        task = reply.task
        result = task.verification_result
        return {"taskId": task.id, "state": task.state, "verificationKind": task.verification.kind,
                "verificationStatus": result.status if result else None,
                "verificationEtaSec": reply.verification_eta_s, "knowledgeIds": reply.knowledge_ids,
                "learnings": {"given": len(learnings), "stored": len(reply.knowledge_ids),
                              "notStored": reply.learnings_not_stored,
                              "notStoredReason": reply.learnings_not_stored_reason}}

    @tools.tool(category="tasks", risk="moderate", annotations=WRITES)
    async def create_task(
        title: Annotated[str, Field(min_length=1, max_length=TASK_TITLE_MAX_CHARS)],
        description: Annotated[str, Field(max_length=TASK_TEXT_MAX_CHARS)] = "",
        plan: Plan = None,
        priority: Annotated[int, Field(description="smaller first", ge=0, le=TASK_PRIORITY_MAX)] = TASK_PRIORITY_DEFAULT,
        verification: VerificationArg | None = None,
        depends_on: Annotated[list[Annotated[str, Field(max_length=256)]],
                              Field(description="task ids that must be done first", max_length=TASK_DEPENDS_MAX)] = [],
    ) -> TaskOutput:
        """Add a task to the queue (ready at once unless it depends on tasks not done)."""
        contract = verification or VerificationArg()
        reply = await current_client().call(
            CreateTask, title=title, description=description, plan=plan, priority=priority, depends_on=depends_on,
            verification=VerificationSpec(kind=contract.kind, commands=contract.commands, cwd=contract.cwd,
                                          timeout_s=contract.timeoutSec))
        return task_detail(reply.task)

    @tools.tool(category="tasks", risk="safe", annotations=READ_ONLY)
    async def list_tasks(
        state: Annotated[list[State], Field(description="only tasks in these states", max_length=6)] = [],
        plan: Plan = None,
        claimedBy: Annotated[str | None, Field(description="only tasks this principal holds", max_length=256)] = None,
        limit: Annotated[int, Field(description="page size", ge=1, le=TASK_LIST_LIMIT_MAX)] = TASK_LIST_LIMIT_DEFAULT,
        offset: Annotated[int, Field(description="skip this many", ge=0, le=TASK_OFFSET_MAX)] = 0,
        host: HostFilter = None,
        newestFirst: Annotated[bool, Field(
            description="by their last move, the latest first (what finished or moved lately)")] = False,
    ) -> TaskListOutput:
        """Tasks in queue order (priority, then age), or the latest moved first; filtered and paged."""
        reply = await current_client().call(ListTasks, states=list(state), plan=plan, claimed_by=claimedBy,
                                            limit=limit, offset=offset, host=host, newest_first=newestFirst)
        return {"tasks": [task_row(t) for t in reply.tasks], "total": reply.total, "limit": limit, "offset": offset}

    @tools.tool(category="tasks", risk="safe", annotations=READ_ONLY)
    async def get_task(taskId: TaskId) -> TaskHistoryOutput:
        """One task in full: its verification result, events (claims, leases run out, reviews) and
        the executions that worked on it."""
        return task_with_history(await current_client().call(GetTask, task_id=taskId))

    @tools.tool(category="tasks", risk="moderate", annotations=WRITES)
    async def review_task(
        taskId: TaskId,
        verdict: Annotated[Literal["approve", "reject", "comment"], Field(
            description="approve: done (and lifts blockers); reject: back to its holder (final: failed); comment")],
        comment: Annotated[str | None, Field(max_length=TASK_TEXT_MAX_CHARS)] = None,
        blocking: Annotated[bool, Field(
            description="comment: keep the task from being worked on until approved")] = False,
        final: Annotated[bool, Field(description="reject: fail the task instead of sending it back")] = False,
    ) -> TaskOutput:
        """Approve or reject a task waiting for review, or comment on one (blocking or not)."""
        reply = await current_client().call(ReviewTask, task_id=taskId, verdict=verdict, comment=comment,
                                            blocking=blocking, final=final)
        return task_detail(reply.task)

    @tools.tool(category="tasks", risk="safe", annotations=READ_ONLY)
    async def search_knowledge(
        query: Annotated[str, Field(min_length=1, max_length=TASK_TEXT_MAX_CHARS)],
        limit: Annotated[int, Field(description="at most this many", ge=1, le=KNOWLEDGE_SEARCH_LIMIT_MAX)] = 10,
        minScore: Annotated[float, Field(description="least relevance", ge=0, le=1)] = 0.0,
    ) -> KnowledgeSearchOutput:
        """What earlier tasks learned, most relevant first (full-text search, scored 0-1)."""
        reply = await current_client().call(SearchKnowledge, query=query, limit=limit, min_score=minScore)
        return {"entries": [knowledge_row(e) for e in reply.entries], "count": len(reply.entries)}

    @tools.tool(category="tasks", risk="moderate", annotations=WRITES)
    async def dispatch_tasks(
        pane_id: AnyHostPaneId,
        plan: Plan = None,
        stop: Annotated[bool, Field(description="stop dispatching to that pane")] = False,
    ) -> DispatchOutput:
        """Make muxd the worker loop of an agent pane: whenever it is idle, muxd claims the next task
        (of `plan`), sends it as a prompt, and completes or releases it by how the turn ended."""
        reply = await current_client().call(DispatchTasks, target=pane_id, plan=plan, stop=stop)
        return {"dispatchers": [{"paneId": d.pane_id, "plan": d.plan, "principal": d.principal,
                                 "taskId": d.task_id, "executionId": d.execution_id, "completed": d.completed,
                                 "released": d.released, "stopping": d.stopping} for d in reply.dispatchers]}

