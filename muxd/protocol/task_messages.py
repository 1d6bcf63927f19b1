"""The task queue on the wire (seed 001): tasks, their claims, leases, completion and review,
the knowledge their learnings leave, and dispatch (muxd as the worker loop of an agent pane).
Part of the unions in messages.py."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from muxd.config import (
    KNOWLEDGE_TAGS_MAX, KNOWLEDGE_TEXT_MAX_CHARS, TASK_DEPENDS_MAX, TASK_LEARNINGS_MAX, TASK_LEASE_DEFAULT_S,
    TASK_LIST_LIMIT_DEFAULT, TASK_NEXT_LIMIT_DEFAULT, TASK_PRIORITY_DEFAULT, TASK_TEXT_MAX_CHARS,
    TASK_TITLE_MAX_CHARS, TASK_VERIFY_COMMANDS_MAX,
)
from muxd.executions.record import Execution
from muxd.protocol.fields import FilePath, Label, ListOffset, Target
from muxd.tasks.model import KnowledgeEntry, Review, Task, TaskEvent, VerificationKind

Title = Annotated[str, msgspec.Meta(max_length=TASK_TITLE_MAX_CHARS)]
Text = Annotated[str, msgspec.Meta(max_length=TASK_TEXT_MAX_CHARS)]
KnowledgeText = Annotated[str, msgspec.Meta(max_length=KNOWLEDGE_TEXT_MAX_CHARS)]
TaskIds = Annotated[list[Label], msgspec.Meta(max_length=TASK_DEPENDS_MAX)]
Commands = Annotated[list[Text], msgspec.Meta(max_length=TASK_VERIFY_COMMANDS_MAX)]
KnowledgeTags = Annotated[list[Label], msgspec.Meta(max_length=KNOWLEDGE_TAGS_MAX)]


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class VerificationSpec(msgspec.Struct, frozen=True, kw_only=True):
    kind: VerificationKind = "none"
    commands: Commands = []
    cwd: FilePath | None = None
    timeout_s: float | None = None


class LearningSpec(msgspec.Struct, frozen=True, kw_only=True):
    content: KnowledgeText
    title: Title | None = None
    tags: KnowledgeTags = []


Learnings = Annotated[list[LearningSpec], msgspec.Meta(max_length=TASK_LEARNINGS_MAX)]


# ---------------------------------------------------------------- requests

class CreateTask(_Message, tag="create-task"):
    id: int
    title: Title
    description: Text = ""
    plan: Label | None = None               # a plan's name or id; a new name makes the plan
    priority: int = TASK_PRIORITY_DEFAULT
    verification: VerificationSpec = VerificationSpec()
    depends_on: TaskIds = []
    context: dict[str, Any] = {}


class ListTasks(_Message, tag="list-tasks"):
    id: int
    states: Annotated[list[Label], msgspec.Meta(max_length=6)] = []   # empty: every state
    plan: Label | None = None
    claimed_by: Label | None = None
    limit: int = TASK_LIST_LIMIT_DEFAULT
    offset: ListOffset = 0
    host: Label | None = None           # tasks created through one daemon's host (MUXD_HOST); None: any
    newest_first: bool = False          # by their last move, latest first (default: priority, then age)


class GetTask(_Message, tag="get-task"):
    id: int
    task_id: Label


class NextActionable(_Message, tag="next-actionable"):
    id: int
    limit: int = TASK_NEXT_LIMIT_DEFAULT
    plan: Label | None = None
    priority_lte: int | None = None
    host: Label | None = None


class ClaimTask(_Message, tag="claim-task"):
    id: int
    task_id: Label
    lease_s: int = TASK_LEASE_DEFAULT_S


class UpdateTaskStatus(_Message, tag="update-task-status"):
    id: int
    task_id: Label
    status: Literal["in_progress", "needs_review"]
    heartbeat: bool = True
    reason: Text | None = None
    context: dict[str, Any] | None = None
    external_ref: Text | None = None


class CompleteTask(_Message, tag="complete-task"):
    id: int
    task_id: Label
    output: dict[str, Any] | None = None
    learnings: Learnings = []
    external_ref: Text | None = None


class ReviewTask(_Message, tag="review-task"):
    id: int
    task_id: Label
    verdict: Literal["approve", "reject", "comment"]
    comment: Text | None = None
    blocking: bool = False                  # comment: an open blocker (not actionable until approved)
    final: bool = False                     # reject: fail the task instead of sending it back


class SearchKnowledge(_Message, tag="search-knowledge"):
    id: int
    query: Text
    limit: int = 10
    min_score: float = 0.0


class DispatchTasks(_Message, tag="dispatch-tasks"):
    """muxd task run: muxd claims, sends, heartbeats and completes tasks for `target`'s agent."""

    id: int
    target: Target
    plan: Label | None = None
    stop: bool = False                      # stop dispatching to that pane (its current task ends first)


# ---------------------------------------------------------------- replies

class TaskReply(_Message, tag="task"):
    id: int
    task: Task
    created: bool = True                    # claim: False when the caller already held it
    events: list[TaskEvent] = []            # get-task
    reviews: list[Review] = []              # get-task
    executions: list[Execution] = []        # get-task: the executions linked to it, newest first
    knowledge_ids: list[str] = []           # complete: the entries its learnings became
    verification_eta_s: int | None = None   # complete: seed 001's verificationEtaSec
    learnings_not_stored: int = 0           # complete: learnings past the quota, completed without
    learnings_not_stored_reason: str | None = None  # complete: why (the knowledge_stored quota's words)


class ActionableTask(msgspec.Struct, frozen=True, kw_only=True):
    task: Task
    knowledge: list[KnowledgeEntry] = []    # the digest: top entries relevant to it
    knowledge_error: bool = False           # the search failed; the task is still offered


class TaskList(_Message, tag="task-list"):
    id: int
    tasks: list[Task] = []
    actionable: list[ActionableTask] = []   # next-actionable
    total: int = 0


class KnowledgeList(_Message, tag="knowledge-list"):
    id: int
    entries: list[KnowledgeEntry]


class Dispatcher(msgspec.Struct, frozen=True, kw_only=True):
    pane_id: str
    plan: str | None
    principal: str                          # who the claims are made as ("agent:%3")
    task_id: str | None = None              # the task its pane works on now
    execution_id: str | None = None
    completed: int = 0
    released: int = 0
    stopping: bool = False


class DispatchReply(_Message, tag="dispatch"):
    id: int
    dispatchers: list[Dispatcher]


TASK_REQUESTS = (CreateTask, ListTasks, GetTask, NextActionable, ClaimTask, UpdateTaskStatus, CompleteTask,
                 ReviewTask, SearchKnowledge, DispatchTasks)
TASK_REPLIES = (TaskReply, TaskList, KnowledgeList, DispatchReply)
