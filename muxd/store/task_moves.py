"""How a task moves: the one UPDATE a move writes, its event, and the checks every move shares.

Callers hold an IMMEDIATE transaction (task_store.py, task_verdicts.py) and pass the task they
read in it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from muxd.config import TASK_LEASE_DEFAULT_S
from muxd.errors import TaskAlreadyClaimed, TaskInvariantViolated
from muxd.store.task_rows import UPDATE, insert_event, update_values
from muxd.tasks.model import FINAL_STATES, HELD_STATES, EventKind, State, Task, TaskEvent
from muxd.tasks.states import check_transition

SYSTEM_ACTOR = "muxd"  # the actor of the daemon's own moves (an expired lease, a check's result)
# The open blocking reviews of task {} (a placeholder or a column): word for word the WHERE of the
# partial index task_reviews_open, which SQLite uses only for a query repeating the index's terms.
OPEN_BLOCKERS = "task_id = {} AND blocking = 1 AND resolved_at IS NULL"


def details(**values: Any) -> dict[str, Any]:
    """An event's detail: the values given, without the None ones."""
    return {name: value for name, value in values.items() if value is not None}


def record_event(c: sqlite3.Connection, task: Task, kind: EventKind, actor: str | None, now: float,
                 to_state: State, detail: dict[str, Any]) -> None:
    insert_event(c, TaskEvent(task_id=task.id, at=now, kind=kind, actor=actor, from_state=task.state,
                              to_state=to_state, detail=detail))


def try_move(c: sqlite3.Connection, task: Task, target: State, *, kind: EventKind, actor: str | None,
             now: float, detail: dict[str, Any], **changes: Any) -> Task | None:
    """`task` moved to `target` with `changes` written and its event recorded; None when the row
    was no longer in `task.state` (another writer moved it first)."""
    check_transition(task.id, task.state, target)
    moved = msgspec.structs.replace(task, state=target, updated_at=now, **changes)
    if c.execute(UPDATE, update_values(moved, task.state)).rowcount != 1:
        return None
    record_event(c, task, kind, actor, now, target, detail)
    return moved


def move(c: sqlite3.Connection, task: Task, target: State, *, kind: EventKind, actor: str | None, now: float,
         detail: dict[str, Any], **changes: Any) -> Task:
    """`try_move`, for a task read in this IMMEDIATE transaction: nobody else can have moved it."""
    moved = try_move(c, task, target, kind=kind, actor=actor, now=now, detail=detail, **changes)
    if moved is None:
        raise TaskInvariantViolated(f"task {task.id} changed while it was being moved", task_id=task.id)
    return moved


def renewed_lease(task: Task, now: float) -> float:
    return now + (task.lease_s or TASK_LEASE_DEFAULT_S)


def verifying(task: Task) -> bool:
    """Whether a verification of the task is pending or running."""
    return task.verification_result is not None and task.verification_result.status in ("pending", "running")


def check_holder(task: Task, agent: str) -> None:
    """Nothing when `agent` holds the task; task.invariant_violated for a finished task,
    task.already_claimed otherwise (a ready task too: its lease ran out, or it was released)."""
    if task.state in FINAL_STATES:
        raise TaskInvariantViolated(f"task {task.id} is {task.state}", task_id=task.id, state=task.state)
    if task.state not in HELD_STATES:
        raise TaskAlreadyClaimed(f"task {task.id} is {task.state}: {agent} does not hold it (its lease ran out, "
                                 f"or it was released)", task_id=task.id, holder=None, state=task.state)
    if task.claimed_by != agent:
        raise TaskAlreadyClaimed(f"task {task.id} is held by {task.claimed_by}, not {agent}", task_id=task.id,
                                 holder=task.claimed_by, state=task.state)


