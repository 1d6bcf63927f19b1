"""The moves a person or the daemon makes on a task: reviews (approve, reject, comment) and the
results of the checks muxd runs for a verification contract. One IMMEDIATE transaction each."""

from __future__ import annotations

import sqlite3

import msgspec

from muxd.errors import BadRequest, Forbidden, TaskInvariantViolated
from muxd.store.database import judged_now, transaction
from muxd.store.task_moves import OPEN_BLOCKERS, SYSTEM_ACTOR, details, move, record_event, renewed_lease, verifying
from muxd.store.task_rows import insert_review, read_task
from muxd.tasks.model import (FINAL_STATES, HELD_STATES, RUN_KINDS, Review, ReviewVerdict, Task, VerificationResult,
                              VerificationStatus)

SYSTEM_REVIEWER = "system"  # the daemon's own reviews, allowed on any task
VERDICTS = ("approve", "reject", "comment")


def _settled(task: Task, status: VerificationStatus, now: float,
             output: str | None = None) -> VerificationResult | None:
    """The verification result once a person decided: a pending or running check is settled by them."""
    result = task.verification_result
    if result is None or not verifying(task):
        return result
    return VerificationResult(status=status, execution_id=result.execution_id, output=output, at=now)


def record_verification(c: sqlite3.Connection, task_id: str, result: VerificationResult, now: float) -> Task:
    """The task after the check muxd runs for it reported: running (kept), passed (done), or failed
    (back in progress to its holder, the failing output as feedback, a new lease)."""
    if result.status not in ("running", "passed", "failed"):
        raise BadRequest(f"a check reports running, passed or failed, not {result.status}", field="status")
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        task = read_task(c, task_id)
        if task.state != "needs_review" or task.verification.kind not in RUN_KINDS or not verifying(task):
            raise TaskInvariantViolated(f"task {task_id} is not waiting for a check ({task.state})",
                                        task_id=task_id, state=task.state)
        stamped = result if result.at is not None else msgspec.structs.replace(result, at=now)
        detail = details(status=result.status, execution_id=result.execution_id, exit_code=result.exit_code)
        if result.status == "running":
            return move(c, task, "needs_review", kind="verification", actor=SYSTEM_ACTOR, now=now, detail=detail,
                        verification_result=stamped)
        if result.status == "passed":
            return move(c, task, "done", kind="verification", actor=SYSTEM_ACTOR, now=now, detail=detail,
                        verification_result=stamped, completed_at=now)
        return move(c, task, "in_progress", kind="verification", actor=SYSTEM_ACTOR, now=now, detail=detail,
                    verification_result=stamped, feedback=result.output, lease_expires_at=renewed_lease(task, now))


def _resolve_blockers(c: sqlite3.Connection, task_id: str, now: float) -> int:
    return c.execute(f"UPDATE task_reviews SET resolved_at = ? WHERE {OPEN_BLOCKERS.format('?')}",
                     (now, task_id)).rowcount


def review(c: sqlite3.Connection, task_id: str, reviewer: str, verdict: ReviewVerdict, *, comment: str | None = None,
           blocking: bool = False, final: bool = False, now: float) -> Task:
    """The task after `reviewer`'s verdict. approve: needs_review -> done, and open blocking reviews
    resolved (in any unfinished state). reject: needs_review -> in_progress to its holder with the
    comment as feedback, or failed when `final`. comment: kept; `blocking` holds the task back from
    being claimed until an approve."""
    if verdict not in VERDICTS:
        raise BadRequest(f"a verdict is approve, reject or comment, not {verdict}", field="verdict")
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        task = read_task(c, task_id)
        if task.state in HELD_STATES and reviewer == task.claimed_by and reviewer != SYSTEM_REVIEWER:
            raise Forbidden("a worker may not review its own task", task_id=task_id, reviewer=reviewer)
        blocking = blocking and verdict == "comment"
        insert_review(c, Review(task_id=task_id, at=now, reviewer=reviewer, verdict=verdict, comment=comment,
                                blocking=blocking))
        detail = details(verdict=verdict, comment=comment, blocking=blocking or None, final=final or None)
        if verdict == "reject":
            if task.state != "needs_review":
                raise TaskInvariantViolated(f"task {task_id} is {task.state}: only a task in needs_review can be "
                                            f"rejected", task_id=task_id, state=task.state)
            if final:
                return move(c, task, "failed", kind="reviewed", actor=reviewer, now=now, detail=detail,
                            last_error=comment or f"rejected by {reviewer}", completed_at=now,
                            verification_result=_settled(task, "failed", now, comment))
            return move(c, task, "in_progress", kind="reviewed", actor=reviewer, now=now, detail=detail,
                        feedback=comment, lease_expires_at=renewed_lease(task, now),
                        verification_result=_settled(task, "failed", now, comment))
        if task.state in FINAL_STATES and (verdict == "approve" or blocking):
            raise TaskInvariantViolated(f"task {task_id} is {task.state}", task_id=task_id, state=task.state)
        if verdict == "approve":
            detail.update(details(resolved=_resolve_blockers(c, task_id, now) or None))
            if task.state == "needs_review":
                return move(c, task, "done", kind="reviewed", actor=reviewer, now=now, detail=detail,
                            completed_at=now, verification_result=_settled(task, "passed", now))
            if "resolved" not in detail:
                raise TaskInvariantViolated(f"task {task_id} is {task.state}, with no open blocking review to "
                                            f"approve", task_id=task_id, state=task.state)
        record_event(c, task, "reviewed", reviewer, now, task.state, detail)
        return task
