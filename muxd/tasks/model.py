"""`Task`, its events and reviews, and knowledge entries: one definition behind the store, the
protocol, the CLI and the MCP tools (which name fields in camelCase, as seed 001 does)."""

from __future__ import annotations

import uuid
from typing import Any, Literal

import msgspec

State = Literal["ready", "claimed", "in_progress", "needs_review", "done", "failed"]
STATES: tuple[State, ...] = ("ready", "claimed", "in_progress", "needs_review", "done", "failed")
HELD_STATES: frozenset[str] = frozenset({"claimed", "in_progress", "needs_review"})  # someone holds it
LEASED_STATES: frozenset[str] = frozenset({"claimed", "in_progress"})  # the holder's lease runs
FINAL_STATES: frozenset[str] = frozenset({"done", "failed"})

VerificationKind = Literal["none", "manual", "commands", "github_pr", "gitlab_mr"]
VERIFICATION_KINDS: tuple[VerificationKind, ...] = ("none", "manual", "commands", "github_pr", "gitlab_mr")
# Kinds whose check muxd runs itself, as an execution in a pane.
RUN_KINDS: frozenset[str] = frozenset({"commands", "github_pr", "gitlab_mr"})
VerificationStatus = Literal["skipped", "pending", "running", "passed", "failed"]


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    """The contract `complete_task` dispatches on (seed 001 verificationContract)."""

    kind: VerificationKind = "none"
    commands: list[str] = []       # kind=commands: shell lines, run in order, all must exit 0
    cwd: str | None = None         # where the commands run (default: the daemon's cwd)
    timeout_s: float | None = None


class VerificationResult(msgspec.Struct, frozen=True, kw_only=True):
    """What the last verification of a task found."""

    status: VerificationStatus
    execution_id: str | None = None   # the execution that ran the check
    exit_code: int | None = None
    output: str | None = None         # the tail of a failing check's output
    at: float | None = None


class Task(msgspec.Struct, frozen=True, kw_only=True):
    id: str                                   # a uuid
    title: str
    description: str = ""
    plan_id: str | None = None                # a uuid; plans have names too
    plan: str | None = None                   # the plan's name
    priority: int = 500                       # 0..1000, smaller first
    state: State = "ready"
    verification: Verification = Verification()
    verification_result: VerificationResult | None = None
    depends_on: list[str] = []                # task ids that must be done first
    context: dict[str, Any] = {}              # merged by update_task_status
    output: dict[str, Any] | None = None      # complete_task's payload
    external_ref: str | None = None           # a PR URL, a commit
    claimed_by: str | None = None             # the holder's principal ("agent:%3")
    claimed_at: float | None = None
    lease_expires_at: float | None = None     # epoch seconds; None outside claimed / in_progress
    lease_s: int | None = None                # the claim's lease length (heartbeats renew by it)
    attempts: int = 0                         # claims so far
    last_error: str | None = None             # why it last went back to ready, or failed
    feedback: str | None = None               # a reviewer's or a failed check's words for the holder
    created_by: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    completed_at: float | None = None
    host: str | None = None                   # the daemon's host it was created through (MUXD_HOST)


EventKind = Literal["created", "claimed", "reclaimed", "status", "heartbeat", "completed", "verification",
                    "reviewed", "released", "lease_expired", "failed", "done"]


class TaskEvent(msgspec.Struct, frozen=True, kw_only=True):
    task_id: str
    seq: int = 0                              # order within the store
    at: float
    kind: EventKind
    actor: str | None = None                  # the principal, or "muxd" for the daemon's own moves
    from_state: State | None = None
    to_state: State | None = None
    detail: dict[str, Any] = {}
    host: str | None = None                   # the daemon's host that made the move (MUXD_HOST)


ReviewVerdict = Literal["approve", "reject", "comment"]


class Review(msgspec.Struct, frozen=True, kw_only=True):
    id: int = 0
    task_id: str
    at: float
    reviewer: str
    verdict: ReviewVerdict
    comment: str | None = None
    blocking: bool = False                    # an open blocking review makes the task not actionable
    resolved_at: float | None = None


class Learning(msgspec.Struct, frozen=True, kw_only=True):
    """One thing a worker learned (complete_task learnings[]): becomes a knowledge entry."""

    content: str
    title: str | None = None
    tags: list[str] = []


class KnowledgeEntry(msgspec.Struct, frozen=True, kw_only=True):
    id: str                                   # a uuid
    content: str
    title: str | None = None
    tags: list[str] = []
    source: str = "task_completion"
    source_task_id: str | None = None
    created_by: str | None = None
    created_at: float = 0.0
    score: float | None = None                # relevance 0..1 in a search answer


def new_id() -> str:
    return str(uuid.uuid4())
