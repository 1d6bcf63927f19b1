"""The output shapes of the task queue tools (seed 001), as task_views.py builds them: camelCase
names, times as ISO 8601 strings (UTC). A task's `executions` are rows of
list_recent_executions, whose schema is that tool's own."""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict


class _TaskCore(TypedDict):
    taskId: str
    title: str
    description: str
    state: str
    priority: int
    planId: str | None
    plan: str | None
    dependsOn: list[str]
    claimedBy: str | None
    leaseExpiresAt: str | None
    attempts: int
    createdAt: str | None
    updatedAt: str | None
    host: str | None            # the daemon's host it was created through (MUXD_HOST): where it came from


class VerificationKindOutput(TypedDict):
    kind: str


class TaskRowOutput(_TaskCore):
    verification: VerificationKindOutput


class VerificationOutput(TypedDict):
    kind: str
    commands: list[str]
    cwd: str | None
    status: str | None
    executionId: str | None
    exitCode: int | None
    output: str | None
    at: str | None


class TaskOutput(_TaskCore):
    """A task in full."""

    verification: VerificationOutput
    context: dict[str, Any]
    output: dict[str, Any] | None
    externalRef: str | None
    claimedAt: str | None
    leaseSec: int | None
    lastError: str | None
    feedback: str | None
    createdBy: str | None
    completedAt: str | None


class KnowledgeOutput(TypedDict):
    id: str
    title: str | None
    content: str
    tags: list[str]
    score: float | None
    source: str
    sourceTaskId: str | None
    createdAt: str | None


class TaskKnowledgeOutput(TypedDict):
    references: list[KnowledgeOutput]
    searchFailed: NotRequired[bool]


class ActionableOutput(TaskRowOutput):
    knowledge: TaskKnowledgeOutput


class NextActionableOutput(TypedDict):
    tasks: list[ActionableOutput]
    count: int


class ClaimOutput(TaskRowOutput):
    leaseSec: int | None
    claimed: bool


class TaskStatusOutput(TaskRowOutput):
    context: dict[str, Any]
    externalRef: str | None


class LearningsOutput(TypedDict):
    given: int
    stored: int
    notStored: int
    notStoredReason: str | None


class CompleteOutput(TypedDict):
    taskId: str
    state: str
    verificationKind: str
    verificationStatus: str | None
    verificationEtaSec: float | None
    knowledgeIds: list[str]
    learnings: LearningsOutput


class TaskListOutput(TypedDict):
    tasks: list[TaskRowOutput]
    total: int
    limit: int
    offset: int


# `from` is a Python keyword: the functional form declares it.
TaskEventOutput = TypedDict("TaskEventOutput", {
    "at": str | None, "kind": str, "actor": str | None, "from": str | None, "to": str | None,
    "host": str | None, "detail": NotRequired[dict[str, Any]]})


class ReviewOutput(TypedDict):
    at: str | None
    reviewer: str
    verdict: str
    comment: str | None
    blocking: bool
    resolvedAt: str | None


class TaskHistoryOutput(TaskOutput):
    events: list[TaskEventOutput]
    reviews: list[ReviewOutput]
    executions: list[dict[str, Any]]


class KnowledgeSearchOutput(TypedDict):
    entries: list[KnowledgeOutput]
    count: int


class DispatcherOutput(TypedDict):
    paneId: str
    plan: str | None
    principal: str
    taskId: str | None
    executionId: str | None
    completed: int
    released: int
    stopping: bool


class DispatchOutput(TypedDict):
    dispatchers: list[DispatcherOutput]
