"""The task queue in SQLite (seed 001): tasks created, read, claimed and moved, one transaction each.

Every function takes an autocommit connection (the Database writer's, or any connection to the
file). Writes run under BEGIN IMMEDIATE: the task is read and written holding the write lock, so
several connections writing one file never interleave, and claim's `UPDATE … WHERE state =
'ready'` stays the compare-and-set that lets exactly one claimant win. Every move goes through
states.check_transition and leaves a task_events row. The moves made by a person or the daemon
(reviews, verification results) live in task_verdicts.py; the machinery of a move in task_moves.py.

Times: the `now` a caller passes is its machine's clock, which SQLite's one machine shares. On
PostgreSQL every move is timed by the database's clock instead (database.judged_now), so the
daemons of a fleet whose clocks disagree agree on when a lease runs out, and whichever daemon's
sweeper gets there first returns it (the others skip the rows it holds).
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from typing import Any, Literal, NamedTuple

import msgspec

from muxd.config import (TASK_LEARNINGS_MAX, TASK_LEASE_MAX_S, TASK_LEASE_MIN_S,
                         TASK_LIST_LIMIT_MAX, TASK_MAX_ATTEMPTS_DEFAULT, TASK_NEXT_LIMIT_MAX, TASK_PRIORITY_MAX,
                         TASK_TITLE_MAX_CHARS)
from muxd.errors import BadRequest, NotFound, TaskInvariantViolated, TaskNotActionable
from muxd.store import knowledge, quotas, task_verdicts
from muxd.store.database import clock_sql, driver_error, is_postgres, judged_now, lock_clause, transaction
from muxd.store.hosts import own
from muxd.store.task_moves import (OPEN_BLOCKERS, SYSTEM_ACTOR, check_holder, details, move, renewed_lease, try_move,
                                   verifying)
from muxd.store.task_rows import (INSERT, from_row, insert_event, insert_values, read_events, read_reviews,
                                  read_task, require_task, select, select_for)
from muxd.tasks.model import (STATES, EventKind, Learning, Review, Task, TaskEvent, Verification, VerificationResult,
                              new_id)

log = logging.getLogger(__name__)
# The moves of a reviewer and of the daemon's checks, part of this module's interface.
review = task_verdicts.review
record_verification = task_verdicts.record_verification

NEEDS_REVIEW_REASON = "waiting for a review"
WorkerStatus = Literal["in_progress", "needs_review"]  # what update_status may set
# Word for word the WHERE of the partial index tasks_leases: SQLite uses a partial index only for
# a query whose WHERE contains the index's own terms. Queries name their partial index (INDEXED BY):
# without statistics the planner prefers tasks_state_created (state=?), reading every ready task and
# sorting them, where the partial index hands them over in order and stops at the limit.
_LEASED = "state IN ('claimed', 'in_progress')"
# What keeps a ready task from being actionable, as conditions on a task id ({}): a dependency
# not done, an open blocking review.
_WAITING_ON = "FROM task_deps d JOIN tasks u ON u.id = d.depends_on WHERE d.task_id = {} AND u.state <> 'done'"
_OPEN_BLOCKERS = f"FROM task_reviews WHERE {OPEN_BLOCKERS}"
_UNBLOCKED = (f"NOT EXISTS (SELECT 1 {_WAITING_ON.format('t.id')}) "
              f"AND NOT EXISTS (SELECT 1 {_OPEN_BLOCKERS.format('t.id')})")
_ORDER = "ORDER BY t.priority, t.created_at, t.seq"
_LATEST_FIRST = "ORDER BY t.updated_at DESC, t.seq DESC"


def _in_range(value: int, low: int, high: int, field: str) -> None:
    if not low <= value <= high:
        raise BadRequest(f"{field} must be from {low} to {high}, not {value}", field=field)


# ---------------------------------------------------------------- creating and reading

def _plan(c: sqlite3.Connection, plan: str, *, create_at: float | None = None) -> tuple[str, str]:
    """(id, name) of the plan named or identified by `plan`; a new name makes a plan when
    `create_at` is given. A uuid that is no plan's id is NotFound, never a new plan's name."""
    row = c.execute("SELECT id, name FROM plans WHERE id = ? OR name = ?", (plan, plan)).fetchone()
    if row is not None:
        return str(row[0]), str(row[1])
    try:
        uuid.UUID(plan)
        is_uuid = True
    except ValueError:
        is_uuid = False
    if create_at is None or is_uuid:
        raise NotFound(f"no plan {plan}", plan=plan)
    # Two daemons sharing PostgreSQL may make the same new plan at once: the later takes the first's.
    c.execute("INSERT INTO plans (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
              (new_id(), plan, create_at))
    row = c.execute("SELECT id, name FROM plans WHERE name = ?", (plan,)).fetchone()
    return str(row[0]), str(row[1])


def create_task(c: sqlite3.Connection, *, title: str, description: str, plan: str | None, priority: int,
                verification: Verification, depends_on: list[str], context: dict[str, Any],
                created_by: str | None, now: float) -> Task:
    """A new ready task (its plan made if `plan` is a new name). A dependency must exist; as
    dependencies are fixed at creation and the id is new, they never form a cycle."""
    title = title.strip()
    if not title:
        raise BadRequest("a task needs a title", field="title")
    if len(title) > TASK_TITLE_MAX_CHARS:
        raise BadRequest(f"a task's title is at most {TASK_TITLE_MAX_CHARS} characters", field="title")
    _in_range(priority, 0, TASK_PRIORITY_MAX, "priority")
    if verification.kind == "commands" and not verification.commands:
        raise BadRequest("a commands verification needs at least one command", field="verification.commands")
    deps = sorted(set(depends_on))
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        for dep in deps:
            require_task(c, dep)
        plan_id, plan_name = _plan(c, plan, create_at=now) if plan is not None else (None, None)
        task = Task(id=new_id(), title=title, description=description, plan_id=plan_id, plan=plan_name,
                    priority=priority, verification=verification, depends_on=deps, context=context,
                    created_by=created_by, created_at=now, updated_at=now)
        host = c.execute(f"{INSERT} RETURNING host", insert_values(task)).fetchone()[0]
        task = msgspec.structs.replace(task, host=host)
        c.executemany("INSERT INTO task_deps (task_id, depends_on) VALUES (?, ?)", [(task.id, d) for d in deps])
        insert_event(c, TaskEvent(task_id=task.id, at=now, kind="created", actor=created_by, to_state="ready",
                                  detail=details(plan=task.plan, priority=priority)))
    return task


def get_task(c: sqlite3.Connection, task_id: str) -> Task:
    """The task `task_id` (its dependencies and plan name with it); NotFound when there is none."""
    return read_task(c, task_id)


def task_events(c: sqlite3.Connection, task_id: str, limit: int = 200) -> list[TaskEvent]:
    """The task's latest `limit` events, oldest first."""
    events = read_events(c, task_id, limit)
    if not events:  # every task has its `created` event: none means no task
        require_task(c, task_id)
    return events


def task_reviews(c: sqlite3.Connection, task_id: str) -> list[Review]:
    """Every review of the task, oldest first."""
    reviews = read_reviews(c, task_id)
    if not reviews:
        require_task(c, task_id)
    return reviews


def list_tasks(c: sqlite3.Connection, *, states: tuple[str, ...] | None, plan: str | None, claimed_by: str | None,
               limit: int, offset: int, now: float, max_attempts: int = TASK_MAX_ATTEMPTS_DEFAULT,
               host: str | None = None, newest_first: bool = False) -> tuple[list[Task], int]:
    """One page of the tasks matching the filters, by (priority, created_at), and how many match.
    `host`: only tasks created through that host's daemon (MUXD_HOST); None: the fleet's.
    `newest_first`: by their last move instead, the latest first (a board's done column)."""
    _in_range(limit, 1, TASK_LIST_LIMIT_MAX, "limit")
    if offset < 0:
        raise BadRequest("offset must not be negative", field="offset")
    unknown = [state for state in states or () if state not in STATES]
    if unknown:
        raise BadRequest(f"no task state {unknown[0]}", field="states")
    expire_leases(c, now, max_attempts=max_attempts)
    where: list[str] = []
    params: list[Any] = []
    with transaction(c):  # the page and the total from one snapshot
        if states:
            where.append(f"t.state IN ({', '.join('?' * len(states))})")
            params.extend(states)
        if plan is not None:
            where.append("t.plan_id = ?")
            params.append(_plan(c, plan)[0])
        if claimed_by is not None:
            where.append("t.claimed_by = ?")
            params.append(claimed_by)
        if host is not None:
            where.append("t.host = ?")
            params.append(host)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        order = _LATEST_FIRST if newest_first else _ORDER
        page = [from_row(row) for row in c.execute(f"{select_for(c)}{clause} {order} LIMIT ? OFFSET ?",
                                                   (*params, limit, offset))]
        total = c.execute(f"SELECT count(*) FROM tasks t{clause}", params).fetchone()[0]
    return page, total


def actionable_query(plan_id: str | None, priority_lte: int | None, limit: int, *,
                     postgres: bool = False, host: str | None = None) -> tuple[str, list[Any]]:
    """The SELECT of next_actionable: it walks tasks_ready (tasks_plan_ready with a plan) in
    order and stops after `limit` unblocked rows, never sorting nor reading other states.
    `postgres`: in PostgreSQL's SQL. `host`: only tasks created through that host's daemon."""
    where: list[str] = ["t.state = 'ready'"]
    params: list[Any] = []
    index = "tasks_ready" if plan_id is None else "tasks_plan_ready"
    if plan_id is not None:
        where.append("t.plan_id = ?")
        params.append(plan_id)
    if priority_lte is not None:
        where.append("t.priority <= ?")
        params.append(priority_lte)
    if host is not None:
        where.append("t.host = ?")
        params.append(host)
    return (f"{select(index, postgres=postgres)} WHERE {' AND '.join(where)} AND {_UNBLOCKED} {_ORDER} LIMIT ?",
            [*params, limit])


def next_actionable(c: sqlite3.Connection, *, plan: str | None, priority_lte: int | None, limit: int, now: float,
                    max_attempts: int = TASK_MAX_ATTEMPTS_DEFAULT, host: str | None = None) -> list[Task]:
    """Up to `limit` ready tasks whose dependencies are done and that no open blocking review
    holds, by (priority, created_at); `host`: of those created through that host (None: the fleet's)."""
    _in_range(limit, 1, TASK_NEXT_LIMIT_MAX, "limit")
    if priority_lte is not None:
        _in_range(priority_lte, 0, TASK_PRIORITY_MAX, "priority_lte")
    expire_leases(c, now, max_attempts=max_attempts)
    with transaction(c):
        sql, params = actionable_query(_plan(c, plan)[0] if plan is not None else None, priority_lte, limit,
                                       postgres=is_postgres(c), host=host)
        return [from_row(row) for row in c.execute(sql, params)]


_COMPLETED_THROUGH = ("(SELECT e.host FROM task_events e WHERE e.task_id = t.id AND e.kind = 'completed' "
                      "ORDER BY e.seq DESC LIMIT 1)")


def pending_verifications(c: sqlite3.Connection) -> list[Task]:
    """Tasks in needs_review whose check muxd runs and has not finished (to resume after a restart),
    of this host: the daemon a task was completed through runs its check (the host of its latest
    completion event); another host's checks are that host's to resume."""
    def field(column: str, key: str) -> str:
        return f"{column}->>'{key}'" if is_postgres(c) else f"json_extract({column}, '$.{key}')"

    return [from_row(row) for row in c.execute(
        f"{select_for(c)} WHERE t.state = 'needs_review' "
        f"AND {field('t.verification', 'kind')} IN ('commands', 'github_pr', 'gitlab_mr') "
        f"AND {field('t.verification_result', 'status')} IN ('pending', 'running') "
        f"AND {own(_COMPLETED_THROUGH)} "
        "ORDER BY t.seq")]


# ---------------------------------------------------------------- a worker's moves

def _blockers(c: sqlite3.Connection, task_id: str) -> dict[str, Any]:
    """What keeps a ready task from being actionable; empty when nothing does."""
    waiting = [row[0] for row in c.execute(f"SELECT d.depends_on {_WAITING_ON.format('?')} ORDER BY 1", (task_id,))]
    reviews = c.execute(f"SELECT count(*) {_OPEN_BLOCKERS.format('?')}", (task_id,)).fetchone()[0]
    return details(waiting_on=waiting or None, open_blocking_reviews=reviews or None)


def claim(c: sqlite3.Connection, task_id: str, agent: str, lease_s: int, now: float, *,
          max_attempts: int = TASK_MAX_ATTEMPTS_DEFAULT) -> tuple[Task, bool]:
    """The task claimed by `agent` for `lease_s` seconds, and whether this call claimed it (False:
    `agent` held it already, its lease unchanged)."""
    _in_range(lease_s, TASK_LEASE_MIN_S, TASK_LEASE_MAX_S, "lease_s")
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        _expire(c, now, max_attempts)
        task = read_task(c, task_id)
        if task.state != "ready":
            check_holder(task, agent)
            return task, False
        blockers = _blockers(c, task_id)
        if blockers:
            raise TaskNotActionable(f"task {task_id} is blocked: " + ", ".join(
                f"{name.replace('_', ' ')} {value}" for name, value in blockers.items()), task_id=task_id, **blockers)
        claimed = _try_claim(c, task, agent, lease_s, now)
        if claimed is None:  # another claimant won the compare-and-set
            task = read_task(c, task_id)
            check_holder(task, agent)
            return task, False
    return claimed, True


def _try_claim(c: sqlite3.Connection, task: Task, agent: str, lease_s: int, now: float) -> Task | None:
    return try_move(c, task, "claimed", kind="claimed", actor=agent, now=now, detail=details(lease_s=lease_s),
                    claimed_by=agent, claimed_at=now, lease_expires_at=now + lease_s, lease_s=lease_s,
                    attempts=task.attempts + 1)


def claim_next(c: sqlite3.Connection, agent: str, lease_s: int, now: float, *, plan: str | None = None,
               priority_lte: int | None = None, max_attempts: int = TASK_MAX_ATTEMPTS_DEFAULT,
               host: str | None = None) -> Task | None:
    """The first actionable task (next_actionable's order) claimed by `agent` for `lease_s`
    seconds; None when no task is actionable. On PostgreSQL a task another claimant is taking
    is passed over, not waited for (SKIP LOCKED): racing workers each take a different one and
    none is refused, where get-next-then-claim makes them all try the head of the queue."""
    _in_range(lease_s, TASK_LEASE_MIN_S, TASK_LEASE_MAX_S, "lease_s")
    if priority_lte is not None:
        _in_range(priority_lte, 0, TASK_PRIORITY_MAX, "priority_lte")
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        _expire(c, now, max_attempts)
        sql, params = actionable_query(_plan(c, plan)[0] if plan is not None else None, priority_lte, 1,
                                       postgres=is_postgres(c), host=host)
        row = c.execute(sql + lock_clause(c, "t", skip_locked=True), params).fetchone()
        if row is None:
            return None
        # Read under the write lock (SQLite) or locked (PostgreSQL): nobody else can move it now.
        claimed = _try_claim(c, from_row(row), agent, lease_s, now)
        if claimed is None:
            raise TaskInvariantViolated(f"task {row[0]} changed while it was being claimed", task_id=row[0])
    return claimed


def update_status(c: sqlite3.Connection, task_id: str, agent: str, status: WorkerStatus, *, heartbeat: bool = True,
                  reason: str | None = None, context: dict[str, Any] | None = None, external_ref: str | None = None,
                  now: float, max_attempts: int = TASK_MAX_ATTEMPTS_DEFAULT) -> Task:
    """The task moved by its holder to in_progress (a heartbeat renews the lease) or needs_review
    (no lease while a person looks; the holder keeps it)."""
    if status not in ("in_progress", "needs_review"):
        raise BadRequest(f"a worker sets in_progress or needs_review, not {status}", field="status")
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        _expire(c, now, max_attempts)
        task = read_task(c, task_id)
        check_holder(task, agent)
        if status == "needs_review":
            lease, reason = None, reason or NEEDS_REVIEW_REASON
        else:  # back from needs_review there is no lease to keep: start one
            lease = renewed_lease(task, now) if heartbeat or task.lease_expires_at is None else task.lease_expires_at
        kind: EventKind = "heartbeat" if task.state == status == "in_progress" else "status"
        return move(c, task, status, kind=kind, actor=agent, now=now, detail=details(reason=reason),
                    lease_expires_at=lease,
                    context={**task.context, **(context or {})},
                    external_ref=task.external_ref if external_ref is None else external_ref)


class Completed(NamedTuple):
    """What `complete` did: the task, the knowledge entries its first learnings became, and why
    the learnings after those were not stored (None: every one was)."""

    task: Task
    knowledge_ids: list[str]
    learnings_not_stored: str | None = None


def _learnings_that_fit(c: sqlite3.Connection, agent: str, learnings: list[Learning],
                        knowledge_quota: int) -> tuple[list[Learning], str | None]:
    """The first learnings that fit in `agent`'s knowledge_stored quota, and why the others do not.
    The quota limits what is stored, never the completion: the work is done either way (seed 001)."""
    if not learnings:  # nothing to store: the quota is not even read
        return [], None
    fits, why = quotas.fit(c, agent, quotas.KNOWLEDGE_STORED, len(learnings), knowledge_quota)
    if why is None:
        return learnings, None
    return learnings[:fits], f"{len(learnings) - fits} of {len(learnings)} learnings not stored: {why}"


def complete(c: sqlite3.Connection, task_id: str, agent: str, *, output: dict[str, Any] | None,
             learnings: list[Learning], external_ref: str | None = None, knowledge_quota: int, now: float,
             max_attempts: int = TASK_MAX_ATTEMPTS_DEFAULT) -> Completed:
    """The task completed by its holder — done, or needs_review when its verification is manual or
    run by muxd — with as many of its learnings stored as knowledge as the holder's quota allows."""
    if len(learnings) > TASK_LEARNINGS_MAX:
        raise BadRequest(f"at most {TASK_LEARNINGS_MAX} learnings", field="learnings")
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        _expire(c, now, max_attempts)
        task = read_task(c, task_id)
        check_holder(task, agent)
        if task.state == "needs_review" and verifying(task):
            raise TaskInvariantViolated(f"task {task_id} is waiting for its verification", task_id=task_id,
                                        state=task.state)
        stored, not_stored = _learnings_that_fit(c, agent, learnings, knowledge_quota)
        kind = task.verification.kind
        done = kind == "none"
        completed = move(c, task, "done" if done else "needs_review", kind="completed", actor=agent, now=now,
                         detail=details(verification=kind, knowledge=len(stored),
                                        knowledge_not_stored=len(learnings) - len(stored) or None),
                         output=output, external_ref=task.external_ref if external_ref is None else external_ref,
                         verification_result=VerificationResult(status="skipped" if done else "pending", at=now),
                         lease_expires_at=None, completed_at=now if done else None)
        ids = knowledge.store_learnings(c, stored, task_id=task_id, created_by=agent, now=now)
    if ids:
        # After the commit, best-effort: an under-count beats undoing a completed task (seed 001).
        try:
            quotas.bump(c, agent, quotas.KNOWLEDGE_STORED, len(ids))
        except driver_error(c) as exc:
            log.warning("could not count %d knowledge entries of %s against its quota: %r", len(ids), agent, exc)
    return Completed(completed, ids, not_stored)


def give_back(c: sqlite3.Connection, task: Task, *, kind: EventKind, actor: str, reason: str,
              detail: dict[str, Any], max_attempts: int, now: float) -> Task:
    """The task back to ready for anyone to claim, or failed once it was claimed `max_attempts` times.
    A failed task keeps its last holder in claimed_by, to say who tried."""
    if task.attempts >= max_attempts:
        return move(c, task, "failed", kind="failed" if kind == "released" else kind, actor=actor, now=now,
                    detail=details(**detail, attempts=task.attempts), last_error=reason, lease_expires_at=None,
                    completed_at=now)
    return move(c, task, "ready", kind=kind, actor=actor, now=now, detail=detail, last_error=reason,
                claimed_by=None, claimed_at=None, lease_expires_at=None, lease_s=None)


def release(c: sqlite3.Connection, task_id: str, agent: str, reason: str, *, max_attempts: int, now: float) -> Task:
    """The task given up by its holder: ready again, or failed after `max_attempts` claims."""
    with transaction(c, immediate=True):
        now = judged_now(c, now)
        task = read_task(c, task_id)
        check_holder(task, agent)
        return give_back(c, task, kind="released", actor=agent, reason=reason, detail=details(reason=reason),
                         max_attempts=max_attempts, now=now)


def _expire(c: sqlite3.Connection, now: float, max_attempts: int) -> list[str]:
    # On PostgreSQL each sweeper (one per daemon) takes the expired tasks no other one holds.
    expired = [from_row(row) for row in c.execute(
        f"{select_for(c, 'tasks_leases')} WHERE {_LEASED} AND lease_expires_at <= ? ORDER BY lease_expires_at"
        f"{lock_clause(c, 't', skip_locked=True)}", (now,))]
    for task in expired:
        give_back(c, task, kind="lease_expired", actor=SYSTEM_ACTOR,
                  reason=f"the lease of {task.claimed_by} expired",
                  detail=details(holder=task.claimed_by, expired_at=task.lease_expires_at),
                  max_attempts=max_attempts, now=now)
    return [task.id for task in expired]


def expire_leases(c: sqlite3.Connection, now: float, *, max_attempts: int) -> list[str]:
    """Claimed and in-progress tasks whose lease ran out go back to ready (failed after
    `max_attempts` claims); returns their ids."""
    # Most calls find nothing: one look at tasks_leases, without the write lock.
    hint = "" if is_postgres(c) else " INDEXED BY tasks_leases"
    clock = clock_sql(c)
    due = c.execute(f"SELECT 1 FROM tasks{hint} WHERE {_LEASED} AND lease_expires_at <= {clock} LIMIT 1",
                    (now,) if clock == "?" else ()).fetchone()
    if due is None:
        return []
    with transaction(c, immediate=True):
        return _expire(c, judged_now(c, now), max_attempts)
