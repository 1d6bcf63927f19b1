"""The task queue's SQLite layer on real files: every move of the state machine and every refusal
with its error code, holders, leases (moved by `now=`, never by waiting), attempts, dependencies
and blocking reviews, ordering and filters, verification results, reviews, the query plans at
100k tasks, and 20 connections racing to claim 1,000 tasks."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from muxd.errors import (BadRequest, Forbidden, MuxdError, NotFound, TaskAlreadyClaimed, TaskInvariantViolated,
                         TaskNotActionable)
from muxd.store import task_store as ts
from muxd.store.database import is_postgres, transaction
from muxd.store.hosts import host_of
from muxd.store.task_rows import COLUMNS, INSERT, insert_values
from muxd.store.task_tallies import FinishedTally, tally
from muxd.tasks.model import STATES, State, Task, Verification, VerificationResult, new_id
from muxd.testing.claim_race import race_connections

NOW = 1_700_000_000.0
A, B = "agent:%1", "agent:%2"


@pytest.fixture
def connect_store(connect_either: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
    """Every test here on both databases: one copy of the queue's logic runs on each (issue 30)."""
    return connect_either


def new(c: sqlite3.Connection, title: str = "a task", *, now: float = NOW, **fields: Any) -> Task:
    args: dict[str, Any] = {"description": "", "plan": None, "priority": 500, "verification": Verification(),
                            "depends_on": [], "context": {}, "created_by": "user:me"}
    return ts.create_task(c, title=title, now=now, **{**args, **fields})


def held(c: sqlite3.Connection, agent: str = A, *, lease_s: int = 900, **fields: Any) -> Task:
    task, won = ts.claim(c, new(c, **fields).id, agent, lease_s, NOW)
    assert won
    return task


def kinds(c: sqlite3.Connection, task_id: str) -> list[str]:
    return [event.kind for event in ts.task_events(c, task_id)]


def refused(error: type[MuxdError], code: str, call: Callable[[], object]) -> MuxdError:
    with pytest.raises(error) as caught:
        call()
    assert caught.value.code == code
    return caught.value


def actionable(c: sqlite3.Connection, **filters: Any) -> list[str]:
    args: dict[str, Any] = {"plan": None, "priority_lte": None, "limit": 20, "now": NOW, **filters}
    return [task.id for task in ts.next_actionable(c, **args)]


# ---------------------------------------------------------------- creating and reading

def test_a_created_task_reads_back_whole_with_its_plan_and_event(store: sqlite3.Connection) -> None:
    first = new(store, "Fix the cache", description="why", plan="release-1", priority=7, context={"repo": "x"},
                verification=Verification(kind="commands", commands=["make test"], timeout_s=60.0))
    assert first == ts.get_task(store, first.id)
    assert (first.state, first.plan, first.priority, first.attempts, first.created_at) == \
        ("ready", "release-1", 7, 0, NOW)
    by_id = new(store, plan=first.plan_id, depends_on=[first.id, first.id])
    assert (by_id.plan_id, by_id.plan, by_id.depends_on) == (first.plan_id, "release-1", [first.id])
    assert ts.get_task(store, by_id.id).depends_on == [first.id]
    [created] = ts.task_events(store, first.id)
    assert (created.kind, created.actor, created.from_state, created.to_state) == ("created", "user:me", None, "ready")
    # Which daemon's host each row came from: the connection's (store/hosts.py), read back as written.
    here = host_of(store)
    assert here and first.host == created.host == here
    claimed = ts.claim(store, first.id, A, 60, NOW)[0]
    assert claimed.host == here and ts.task_events(store, first.id)[-1].host == here


@pytest.mark.parametrize(("fields", "field"), [
    ({"title": "  "}, "title"), ({"title": "x" * 201}, "title"), ({"priority": -1}, "priority"),
    ({"priority": 1001}, "priority"), ({"verification": Verification(kind="commands")}, "verification.commands"),
])
def test_a_task_is_refused_a_bad_field(store: sqlite3.Connection, fields: dict[str, Any], field: str) -> None:
    error = refused(BadRequest, "bad_request", lambda: new(store, **fields))
    assert error.detail["field"] == field


def test_unknown_tasks_and_plans_are_not_found(store: sqlite3.Connection) -> None:
    missing = new_id()
    error = refused(NotFound, "not_found", lambda: new(store, depends_on=[missing]))
    assert error.message == f"no task {missing}"
    for call in (lambda: ts.get_task(store, missing), lambda: ts.task_events(store, missing),
                 lambda: ts.claim(store, missing, A, 900, NOW), lambda: ts.review(store, missing, "user:r", "comment",
                                                                                   now=NOW)):
        assert refused(NotFound, "not_found", call).detail == {"task_id": missing}
    # A uuid names a plan by id: one that is no plan's is refused, never made a plan's name.
    refused(NotFound, "not_found", lambda: new(store, plan=new_id()))
    refused(NotFound, "not_found", lambda: actionable(store, plan="nope"))
    assert store.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


# ---------------------------------------------------------------- claims and holders

def test_a_claim_is_idempotent_for_its_holder_and_refused_to_others(store: sqlite3.Connection) -> None:
    task = new(store)
    claimed, won = ts.claim(store, task.id, A, 600, NOW)
    assert won and (claimed.state, claimed.claimed_by, claimed.lease_expires_at, claimed.lease_s, claimed.attempts) \
        == ("claimed", A, NOW + 600, 600, 1)
    again, won = ts.claim(store, task.id, A, 900, NOW + 100)
    assert not won and again == claimed  # the lease it had, not a new one
    error = refused(TaskAlreadyClaimed, "task.already_claimed", lambda: ts.claim(store, task.id, B, 900, NOW + 100))
    assert error.detail["holder"] == A
    assert kinds(store, task.id) == ["created", "claimed"]
    assert refused(BadRequest, "bad_request", lambda: ts.claim(store, new(store).id, A, 59, NOW)).detail == \
        {"field": "lease_s"}


def test_a_worker_walks_a_task_to_done(store: sqlite3.Connection) -> None:
    task = held(store, lease_s=600)
    working = ts.update_status(store, task.id, A, "in_progress", now=NOW + 10)
    assert (working.state, working.lease_expires_at, working.updated_at) == ("in_progress", NOW + 610, NOW + 10)
    beat = ts.update_status(store, task.id, A, "in_progress", now=NOW + 300)
    assert beat.lease_expires_at == NOW + 900
    kept = ts.update_status(store, task.id, A, "in_progress", heartbeat=False, now=NOW + 400)
    assert kept.lease_expires_at == NOW + 900
    waiting = ts.update_status(store, task.id, A, "needs_review", reason="is this right?", now=NOW + 500)
    assert (waiting.state, waiting.claimed_by, waiting.lease_expires_at) == ("needs_review", A, None)
    # No lease while a person looks: the task waits past any lease, then its holder goes on.
    assert ts.expire_leases(store, NOW + 10_000, max_attempts=3) == []
    back = ts.update_status(store, task.id, A, "in_progress", heartbeat=False, now=NOW + 10_000)
    assert (back.state, back.lease_expires_at) == ("in_progress", NOW + 10_600)
    done, knowledge_ids, _ = ts.complete(store, task.id, A, output={"pr": 7}, learnings=[], external_ref="sha1",
                                         knowledge_quota=0, now=NOW + 10_100)
    assert knowledge_ids == []
    assert (done.state, done.output, done.external_ref, done.completed_at, done.lease_expires_at) == \
        ("done", {"pr": 7}, "sha1", NOW + 10_100, None)
    assert done.verification_result == VerificationResult(status="skipped", at=NOW + 10_100)
    assert done == ts.get_task(store, task.id)
    events = ts.task_events(store, task.id)
    assert [e.kind for e in events] == ["created", "claimed", "status", "heartbeat", "heartbeat", "status", "status",
                                        "completed"]
    assert events[5].detail == {"reason": "is this right?"}
    assert events[-1].detail == {"verification": "none", "knowledge": 0}
    assert [e.seq for e in events] == sorted(e.seq for e in events)


def test_update_status_merges_context_and_replaces_the_external_ref(store: sqlite3.Connection) -> None:
    task = held(store, context={"a": 1, "b": 2})
    ts.update_status(store, task.id, A, "in_progress", context={"b": 3, "c": 4}, external_ref="pr/1", now=NOW)
    updated = ts.update_status(store, task.id, A, "in_progress", external_ref="pr/2", now=NOW)
    assert (updated.context, updated.external_ref) == ({"a": 1, "b": 3, "c": 4}, "pr/2")


def test_only_the_holder_moves_a_task(store: sqlite3.Connection) -> None:
    task = held(store)
    ready = new(store)
    moves: list[Callable[[str, str], object]] = [
        lambda agent, task_id: ts.update_status(store, task_id, agent, "in_progress", now=NOW),
        lambda agent, task_id: ts.complete(store, task_id, agent, output=None, learnings=[], knowledge_quota=0,
                                           now=NOW),
        lambda agent, task_id: ts.release(store, task_id, agent, "no", max_attempts=3, now=NOW),
    ]
    for do in moves:
        assert refused(TaskAlreadyClaimed, "task.already_claimed", lambda: do(B, task.id)).detail["holder"] == A
        assert refused(TaskAlreadyClaimed, "task.already_claimed", lambda: do(A, ready.id)).detail["holder"] is None
    assert ts.get_task(store, task.id) == task
    refused(BadRequest, "bad_request", lambda: ts.update_status(store, task.id, A, "done", now=NOW))  # type: ignore[arg-type]


def test_a_finished_task_refuses_every_move(store: sqlite3.Connection) -> None:
    done = held(store)
    ts.complete(store, done.id, A, output=None, learnings=[], knowledge_quota=0, now=NOW)
    failed = held(store)
    ts.release(store, failed.id, A, "cannot", max_attempts=1, now=NOW)
    for task_id in (done.id, failed.id):
        for call in (lambda: ts.claim(store, task_id, A, 900, NOW),
                     lambda: ts.update_status(store, task_id, A, "in_progress", now=NOW),
                     lambda: ts.complete(store, task_id, A, output=None, learnings=[], knowledge_quota=0, now=NOW),
                     lambda: ts.release(store, task_id, A, "x", max_attempts=3, now=NOW),
                     lambda: ts.review(store, task_id, "user:r", "approve", now=NOW),
                     lambda: ts.review(store, task_id, "user:r", "reject", now=NOW),
                     lambda: ts.review(store, task_id, "user:r", "comment", blocking=True, now=NOW),
                     lambda: ts.record_verification(store, task_id, VerificationResult(status="passed"), NOW)):
            refused(TaskInvariantViolated, "task.invariant_violated", call)


# ---------------------------------------------------------------- leases and attempts

def test_an_expired_lease_returns_the_task_to_ready_with_its_event(store: sqlite3.Connection) -> None:
    task = held(store, lease_s=60)
    assert ts.expire_leases(store, NOW + 59, max_attempts=3) == []
    assert ts.expire_leases(store, NOW + 60, max_attempts=3) == [task.id]
    ready = ts.get_task(store, task.id)
    assert (ready.state, ready.claimed_by, ready.lease_expires_at, ready.attempts, ready.updated_at) == \
        ("ready", None, None, 1, NOW + 60)
    assert ready.last_error == f"the lease of {A} expired"
    expired = ts.task_events(store, task.id)[-1]
    assert (expired.kind, expired.actor, expired.from_state, expired.to_state, expired.detail) == \
        ("lease_expired", "muxd", "claimed", "ready", {"holder": A, "expired_at": NOW + 60})
    refused(TaskAlreadyClaimed, "task.already_claimed",
            lambda: ts.update_status(store, task.id, A, "in_progress", now=NOW + 61))


def test_every_operation_expires_leases_first(store: sqlite3.Connection) -> None:
    task = held(store, lease_s=60)
    refused(TaskAlreadyClaimed, "task.already_claimed", lambda: ts.claim(store, task.id, B, 900, NOW + 59))
    # No sweep ran: the claim itself finds the lease over.
    taken, won = ts.claim(store, task.id, B, 900, NOW + 60)
    assert won and (taken.claimed_by, taken.attempts) == (B, 2)
    refused(TaskAlreadyClaimed, "task.already_claimed",
            lambda: ts.update_status(store, task.id, A, "in_progress", now=NOW + 61))
    other = held(store, lease_s=60)
    assert other.id in actionable(store, now=NOW + 60)
    third = held(store, lease_s=60)
    assert ts.list_tasks(store, states=("ready",), plan=None, claimed_by=None, limit=10, offset=0,
                         now=NOW + 60)[1] == 2 and ts.get_task(store, third.id).state == "ready"


def test_a_task_fails_after_max_attempts(store: sqlite3.Connection) -> None:
    task = new(store)
    for attempt in (1, 2):
        claimed, _ = ts.claim(store, task.id, A, 60, NOW + attempt * 100)
        assert claimed.attempts == attempt
    assert ts.expire_leases(store, NOW + 1000, max_attempts=2) == [task.id]
    failed = ts.get_task(store, task.id)
    assert (failed.state, failed.claimed_by, failed.completed_at) == ("failed", A, NOW + 1000)
    last = ts.task_events(store, task.id)[-1]
    assert (last.kind, last.to_state, last.detail["attempts"]) == ("lease_expired", "failed", 2)


def test_a_release_returns_the_task_or_fails_it(store: sqlite3.Connection) -> None:
    task = held(store)
    released = ts.release(store, task.id, A, "not my area", max_attempts=3, now=NOW + 5)
    assert (released.state, released.claimed_by, released.lease_expires_at, released.last_error) == \
        ("ready", None, None, "not my area")
    ts.claim(store, task.id, B, 900, NOW + 6)
    failed = ts.release(store, task.id, B, "still broken", max_attempts=2, now=NOW + 7)
    assert (failed.state, failed.last_error) == ("failed", "still broken")
    assert kinds(store, task.id)[-3:] == ["released", "claimed", "failed"]


# ---------------------------------------------------------------- what is actionable

def test_dependencies_hold_a_task_back_until_done(store: sqlite3.Connection) -> None:
    first = new(store, priority=900)
    second = new(store, priority=1, depends_on=[first.id])
    assert actionable(store) == [first.id]
    error = refused(TaskNotActionable, "task.not_actionable", lambda: ts.claim(store, second.id, A, 900, NOW))
    assert error.detail["waiting_on"] == [first.id]
    ts.claim(store, first.id, A, 900, NOW)
    assert actionable(store) == []
    ts.complete(store, first.id, A, output=None, learnings=[], knowledge_quota=0, now=NOW)
    assert actionable(store) == [second.id]
    assert ts.claim(store, second.id, B, 900, NOW)[1]


def test_claim_next_takes_the_first_actionable_task(store: sqlite3.Connection) -> None:
    first = new(store, priority=900, plan="p")
    waiting = new(store, priority=1, depends_on=[first.id])
    other = new(store, priority=500)
    assert ts.claim_next(store, A, 60, NOW, plan="p") == ts.get_task(store, first.id)
    task = ts.get_task(store, first.id)
    assert (task.state, task.claimed_by, task.lease_expires_at, task.attempts) == ("claimed", A, NOW + 60, 1)
    assert [e.kind for e in ts.task_events(store, first.id)] == ["created", "claimed"]
    assert ts.claim_next(store, B, 60, NOW, plan="p") is None        # the plan's only task is taken
    assert ts.claim_next(store, B, 60, NOW, priority_lte=100) is None  # `waiting` waits on `first`
    assert ts.claim_next(store, B, 600, NOW).id == other.id
    assert ts.claim_next(store, B, 60, NOW) is None
    assert ts.claim_next(store, B, 60, NOW + 61).id == first.id      # its lease ran out: first again
    ts.complete(store, first.id, B, output=None, learnings=[], knowledge_quota=0, now=NOW + 62)
    assert ts.claim_next(store, A, 60, NOW + 62).id == waiting.id
    refused(BadRequest, "bad_request", lambda: ts.claim_next(store, A, 0, NOW))


def test_a_blocking_review_holds_a_task_back_until_approved(store: sqlite3.Connection) -> None:
    task = new(store)
    ts.review(store, task.id, "user:r", "comment", comment="just a note", now=NOW)
    assert actionable(store) == [task.id]
    refused(TaskInvariantViolated, "task.invariant_violated",
            lambda: ts.review(store, task.id, "user:r", "approve", now=NOW))  # nothing to approve
    ts.review(store, task.id, "user:r", "comment", comment="wait for the API", blocking=True, now=NOW + 1)
    assert actionable(store) == []
    error = refused(TaskNotActionable, "task.not_actionable", lambda: ts.claim(store, task.id, A, 900, NOW))
    assert error.detail["open_blocking_reviews"] == 1
    assert ts.review(store, task.id, "user:r", "approve", now=NOW + 2).state == "ready"
    assert actionable(store) == [task.id]
    reviews = ts.task_reviews(store, task.id)
    assert [(r.verdict, r.blocking, r.resolved_at) for r in reviews] == \
        [("comment", False, None), ("comment", True, NOW + 2), ("approve", False, None)]
    assert kinds(store, task.id).count("reviewed") == 3


def test_actionable_tasks_come_by_priority_then_age(store: sqlite3.Connection) -> None:
    late_urgent = new(store, "late urgent", priority=1, now=NOW + 10)
    old = new(store, "old", priority=5, now=NOW)
    same_instant = [new(store, f"same {n}", priority=5, now=NOW + 1) for n in range(3)]
    low = new(store, "low", priority=1000, now=NOW - 100)
    held(store, priority=0)
    expected = [late_urgent.id, old.id, *(t.id for t in same_instant), low.id]
    assert actionable(store) == expected
    assert actionable(store, limit=2) == expected[:2]
    assert actionable(store, priority_lte=5) == expected[:5]
    assert actionable(store, priority_lte=0) == []
    refused(BadRequest, "bad_request", lambda: actionable(store, limit=21))
    refused(BadRequest, "bad_request", lambda: actionable(store, priority_lte=1001))


def test_the_plan_filter_takes_a_name_or_an_id(store: sqlite3.Connection) -> None:
    mine = new(store, plan="mine", priority=9)
    new(store, plan="theirs", priority=1)
    new(store, priority=1)
    assert actionable(store, plan="mine") == actionable(store, plan=mine.plan_id) == [mine.id]


def test_list_pages_filters_and_counts(store: sqlite3.Connection) -> None:
    tasks = [new(store, f"t{n}", plan="p" if n % 2 else None, priority=n) for n in range(7)]
    ts.claim(store, tasks[1].id, A, 900, NOW)
    ts.claim(store, tasks[2].id, B, 900, NOW)

    def listed(**filters: Any) -> tuple[list[int], int]:
        args: dict[str, Any] = {"states": None, "plan": None, "claimed_by": None, "limit": 3, "offset": 0,
                                "now": NOW, **filters}
        page, total = ts.list_tasks(store, **args)
        return [t.priority for t in page], total

    assert listed() == ([0, 1, 2], 7)
    assert listed(offset=6) == ([6], 7)
    assert listed(states=("ready",), limit=10) == ([0, 3, 4, 5, 6], 5)
    assert listed(states=("claimed", "done"), limit=10) == ([1, 2], 2)
    assert listed(plan="p", limit=10) == ([1, 3, 5], 3)
    assert listed(claimed_by=A) == ([1], 1)
    refused(BadRequest, "bad_request", lambda: listed(states=("sleeping",)))
    refused(BadRequest, "bad_request", lambda: listed(limit=0))


def test_a_list_newest_first_puts_the_latest_move_on_top(store: sqlite3.Connection) -> None:
    """A board's done column: the task that moved last first, whatever its priority or age."""
    old, middle, new_one = (new(store, title, priority=p, now=NOW + n)
                            for n, (title, p) in enumerate([("old", 1000), ("middle", 900), ("new", 500)]))
    ts.claim(store, old.id, A, 900, NOW + 10)

    def titles(**order: Any) -> list[str]:
        page, _ = ts.list_tasks(store, states=None, plan=None, claimed_by=None, limit=10, offset=0, now=NOW + 11,
                                **order)
        return [t.title for t in page]

    assert titles() == ["new", "middle", "old"]  # by priority
    assert titles(newest_first=True) == ["old", "new", "middle"]  # claimed last, then created last


# ---------------------------------------------------------------- verification and review

@pytest.mark.parametrize(("kind", "state", "status", "resumed"), [
    ("none", "done", "skipped", False), ("manual", "needs_review", "pending", False),
    ("commands", "needs_review", "pending", True), ("github_pr", "needs_review", "pending", True),
    ("gitlab_mr", "needs_review", "pending", True),
])
def test_completion_dispatches_on_the_verification_kind(store: sqlite3.Connection, kind: str, state: str,
                                                        status: str, resumed: bool) -> None:
    verification = Verification(kind=kind, commands=["true"] if kind == "commands" else [])  # type: ignore[arg-type]
    task = held(store, verification=verification)
    completed = ts.complete(store, task.id, A, output={"ok": 1}, learnings=[], knowledge_quota=0, now=NOW + 1).task
    assert completed.state == state and completed.verification_result is not None
    assert completed.verification_result.status == status
    assert (completed.completed_at is not None) == (state == "done")
    assert [t.id for t in ts.pending_verifications(store)] == ([task.id] if resumed else [])
    assert ts.task_events(store, task.id)[-1].detail["verification"] == kind


def test_a_holder_waiting_in_review_can_complete_unless_a_check_is_pending(store: sqlite3.Connection) -> None:
    task = held(store, verification=Verification(kind="manual"))
    ts.update_status(store, task.id, A, "needs_review", now=NOW)
    completed = ts.complete(store, task.id, A, output=None, learnings=[], knowledge_quota=0, now=NOW + 1).task
    assert (completed.state, completed.verification_result) == \
        ("needs_review", VerificationResult(status="pending", at=NOW + 1))
    refused(TaskInvariantViolated, "task.invariant_violated",
            lambda: ts.complete(store, task.id, A, output=None, learnings=[], knowledge_quota=0, now=NOW + 2))


def test_a_check_result_moves_the_task(store: sqlite3.Connection) -> None:
    verification = Verification(kind="commands", commands=["make test"])
    passing, failing = held(store, verification=verification, lease_s=600), held(store, verification=verification)
    for task in (passing, failing):
        ts.complete(store, task.id, A, output=None, learnings=[], knowledge_quota=0, now=NOW)
        running = ts.record_verification(store, task.id, VerificationResult(status="running", execution_id="e1"),
                                         NOW + 1)
        assert running.state == "needs_review" and running.verification_result == \
            VerificationResult(status="running", execution_id="e1", at=NOW + 1)
    assert {t.id for t in ts.pending_verifications(store)} == {passing.id, failing.id}
    done = ts.record_verification(store, passing.id, VerificationResult(status="passed", exit_code=0), NOW + 2)
    assert (done.state, done.completed_at) == ("done", NOW + 2)
    back = ts.record_verification(store, failing.id,
                                  VerificationResult(status="failed", exit_code=1, output="2 tests failed"), NOW + 3)
    assert (back.state, back.claimed_by, back.feedback, back.lease_expires_at) == \
        ("in_progress", A, "2 tests failed", NOW + 903)
    assert ts.pending_verifications(store) == []
    for task in (passing, failing, held(store)):  # nothing is waiting for a check any more
        refused(TaskInvariantViolated, "task.invariant_violated",
                lambda: ts.record_verification(store, task.id, VerificationResult(status="passed"), NOW + 4))
    refused(BadRequest, "bad_request",
            lambda: ts.record_verification(store, passing.id, VerificationResult(status="pending"), NOW))
    assert ts.task_events(store, failing.id)[-1].detail == {"status": "failed", "exit_code": 1}


def in_review(c: sqlite3.Connection) -> Task:
    task = held(c, verification=Verification(kind="manual"), lease_s=300)
    return ts.complete(c, task.id, A, output=None, learnings=[], knowledge_quota=0, now=NOW)[0]


def test_a_review_approves_or_sends_back_or_fails(store: sqlite3.Connection) -> None:
    approved = ts.review(store, in_review(store).id, "user:r", "approve", comment="good", now=NOW + 1)
    assert (approved.state, approved.completed_at) == ("done", NOW + 1)
    assert approved.verification_result == VerificationResult(status="passed", at=NOW + 1)

    task = in_review(store)
    back = ts.review(store, task.id, "user:r", "reject", comment="add a test", now=NOW + 2)
    assert (back.state, back.claimed_by, back.feedback, back.lease_expires_at) == \
        ("in_progress", A, "add a test", NOW + 302)
    refused(TaskInvariantViolated, "task.invariant_violated",
            lambda: ts.review(store, task.id, "user:r", "reject", now=NOW + 3))  # in progress: nothing to reject

    failed = ts.review(store, in_review(store).id, "user:r", "reject", comment="wrong idea", final=True, now=NOW + 4)
    assert (failed.state, failed.last_error) == ("failed", "wrong idea")
    last = ts.task_events(store, failed.id)[-1]
    assert (last.kind, last.actor, last.from_state, last.to_state, last.detail) == \
        ("reviewed", "user:r", "needs_review", "failed", {"verdict": "reject", "comment": "wrong idea", "final": True})


def test_a_worker_may_not_review_its_own_task(store: sqlite3.Connection) -> None:
    task = in_review(store)
    for verdict in ("approve", "reject", "comment"):
        refused(Forbidden, "forbidden", lambda: ts.review(store, task.id, A, verdict, now=NOW))
    assert ts.task_reviews(store, task.id) == []
    assert ts.review(store, task.id, "system", "approve", now=NOW).state == "done"
    other = held(store, agent="system")
    assert ts.review(store, other.id, "system", "comment", comment="self-note", now=NOW).state == "claimed"


def test_the_queue_is_counted_for_metrics(store: sqlite3.Connection) -> None:
    fast, slow = held(store), held(store, B)
    ts.complete(store, fast.id, A, output=None, learnings=[], knowledge_quota=10, now=NOW + 5)
    ts.complete(store, slow.id, B, output=None, learnings=[], knowledge_quota=10, now=NOW + 100)
    failed = held(store)
    ts.release(store, failed.id, A, "gave up", max_attempts=1, now=NOW + 1000)
    new(store)
    still = held(store, B)
    counted = tally(store, (10.0, 60.0, 600.0))
    assert counted.by_state == {**dict.fromkeys(STATES, 0), "ready": 1, "claimed": 1, "done": 2, "failed": 1}
    assert counted.held == {(B, "claimed"): 1} and still.claimed_by == B
    assert counted.finished["done"] == FinishedTally(2, 105.0, (1, 1, 2))
    assert counted.finished["failed"] == FinishedTally(1, 1000.0, (0, 0, 0))


# ---------------------------------------------------------------- at scale

def test_next_actionable_reads_the_partial_indexes_at_100k_tasks(store: sqlite3.Connection) -> None:
    plan_id = new(store, plan="big").plan_id
    states: tuple[State, ...] = ("done", "done", "done", "failed", "in_progress", "ready")
    rows = [insert_values(Task(id=new_id(), title="t", priority=n % 1000, state=states[n % 6],
                               plan_id=plan_id if n % 2 else None, created_at=NOW + n, updated_at=NOW + n,
                               lease_expires_at=NOW + 10**6 if states[n % 6] == "in_progress" else None))
            for n in range(100_000)]
    postgres = is_postgres(store)
    if postgres:  # loaded as a bulk load would, then analysed as autovacuum would: it plans by statistics
        load = f"COPY tasks ({', '.join(COLUMNS)}) FROM STDIN"
        with store.raw.cursor().copy(load) as copy:  # type: ignore[attr-defined]
            for row in rows:
                copy.write_row(row)
        store.execute("ANALYZE")
    else:
        with transaction(store):
            store.executemany(INSERT, rows)
    for plan, priority_lte, index in ((None, None, "tasks_ready"), (plan_id, None, "tasks_plan_ready"),
                                      (None, 10, "tasks_ready"), (plan_id, 10, "tasks_plan_ready")):
        sql, params = ts.actionable_query(plan, priority_lte, 5, postgres=postgres)
        if postgres:
            steps = [row[0] for row in store.execute(f"EXPLAIN {sql}", params)]
            assert any(f"Index Scan using {index} on tasks" in step for step in steps), steps
            assert not any("Sort" in step for step in steps), steps  # no sort: the index gives the order
        else:
            steps = [row[3] for row in store.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            assert f"USING INDEX {index}" in steps[0], steps
            assert not any("TEMP B-TREE" in step for step in steps), steps  # no sort: the index gives the order
            assert any("USING INDEX task_reviews_open" in step for step in steps), steps
        assert len(actionable(store, plan=plan, priority_lte=priority_lte, limit=5)) == 5
    assert ts.expire_leases(store, NOW + 10**6 - 1, max_attempts=3) == []


@pytest.mark.parametrize("claim_next", [False, True], ids=["get_then_claim", "claim_next"])
def test_racing_connections_claim_each_task_exactly_once(connect_store: Callable[[], sqlite3.Connection],
                                                         claim_next: bool) -> None:
    store = connect_store()
    ids = {new(store, f"task {n}", priority=n % 10).id for n in range(1000)}
    race = race_connections(connect_store, 20, now=NOW, claim_next=claim_next)
    claims = [task_id for won in race.wins for task_id in won]
    assert len(claims) == 1000 and set(claims) == ids
    assert sum(1 for won in race.wins if won) > 1  # they really raced
    if claim_next:
        assert race.lost_races == 0  # each took a task nobody else was taking: none refused
    rows = store.execute("SELECT state, attempts, count(*) FROM tasks GROUP BY state, attempts").fetchall()
    assert rows == [("claimed", 1, 1000)]
    claimed = store.execute("SELECT task_id FROM task_events WHERE kind = 'claimed'")
    per_task = Counter(task_id for (task_id,) in claimed)
    assert set(per_task.values()) == {1} and len(per_task) == 1000
