"""ExecutionTracker and usage limits: a turn a limit stops fails as `usage_limit`, whichever
source told it; a usage-limited agent takes a prompt (the resume at its reset), unless a dialog
about the limit waits for a choice; a person's prompt at a limited agent is recorded."""

from __future__ import annotations

import msgspec

from muxd.config import EXECUTION_IDLE_SETTLE_S, EXECUTION_TURN_UNSEEN_S
from muxd.detectors.state import AgentError, Confirmation, UsageLimit
from muxd.executions.record import Execution
from muxd.executions.tracker import Deliver, ExecutionTracker, Finish, Save, turn_error
from test_execution_tracker import idle_tracker, only, prompt, state

LIMIT = UsageLimit(message="You've hit your 5-hour limit · resets 9:21pm (UTC)", resets_at=1_795_900_000.0)


def limited(*, limit: UsageLimit = LIMIT, dialog: bool = False):
    return msgspec.structs.replace(
        state("UsageLimited", error=AgentError(type="usage_limit", message=limit.message)), limit=limit,
        confirmation=Confirmation(prompt="What do you want to do?", options=["1. Stop", "2. Wait"]) if dialog else None)


def ended(tracker: ExecutionTracker, now: float) -> Execution:
    return only(tracker.tick(now), Finish).execution  # type: ignore[attr-defined,no-any-return]


def test_a_turn_a_usage_limit_stops_fails_with_usage_limit():
    tracker = idle_tracker()
    tracker.submit(prompt(), 10.0)
    tracker.state_changed(state("Thinking"), 10.5)
    assert tracker.state_changed(limited(), 11.0) == []  # settles first, as at its prompt
    assert tracker.due() == 11.0 + EXECUTION_IDLE_SETTLE_S
    done = ended(tracker, 11.0 + EXECUTION_IDLE_SETTLE_S)
    assert done.status == "failed" and done.error is not None
    assert (done.error.type, done.error.message) == ("usage_limit", LIMIT.message)


def test_a_limit_met_at_once_ends_the_turn_never_seen_busy():
    tracker = idle_tracker()
    tracker.submit(prompt(), 10.0)
    tracker.state_changed(limited(), 10.2)
    done = ended(tracker, 10.0 + EXECUTION_TURN_UNSEEN_S)
    assert done.status == "failed" and done.error.type == "usage_limit"


def test_a_rate_limit_the_agent_gave_up_on_is_a_usage_limit_too():
    assert turn_error("rate_limited", "exceeded retry limit, last status: 429").type == "usage_limit"
    assert turn_error("usage_limit", "quota").type == "usage_limit"
    assert turn_error("overloaded", "529").type == "overloaded"
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Thinking"), 0.5)
    # a screen that shows the error at its prompt, no UsageLimited: the error's kind decides
    tracker.state_changed(state("Idle", error=AgentError(type="rate_limited", message="429 Too Many Requests")), 1.0)
    assert ended(tracker, 1.0 + EXECUTION_IDLE_SETTLE_S).error.type == "usage_limit"


def test_a_usage_limited_agent_takes_the_prompt_that_resumes_it():
    tracker = idle_tracker()
    tracker.state_changed(limited(), 5.0)
    resume = msgspec.structs.replace(prompt("continue"), triggered_by="schedule")
    deliver = only(tracker.submit(resume, 100.0), Deliver)
    assert deliver.execution.status == "running" and deliver.execution.triggered_by == "schedule"
    tracker.state_changed(state("Thinking"), 101.0)
    tracker.state_changed(state("Idle"), 102.0)
    assert ended(tracker, 102.0 + EXECUTION_IDLE_SETTLE_S).status == "success"


def test_a_dialog_about_the_limit_takes_no_prompt():
    tracker = idle_tracker()
    tracker.state_changed(limited(dialog=True), 5.0)
    pending = only(tracker.submit(prompt("continue"), 6.0), Save).execution
    assert pending.status == "pending"  # delivered once the agent is at a prompt again
    assert only(tracker.state_changed(state("Idle"), 7.0), Deliver).execution.id == pending.id


def test_a_persons_prompt_at_a_limited_agent_starts_an_execution():
    tracker = idle_tracker()
    tracker.state_changed(limited(), 5.0)
    person = prompt("try again")
    effects = tracker.state_changed(state("Thinking"), 6.0, manual=lambda: (person, "try again"))
    started = only(effects, Save).execution
    assert started.status == "running" and started.triggered_by == "manual" and started.message == "try again"
