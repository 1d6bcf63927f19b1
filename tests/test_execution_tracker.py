"""ExecutionTracker: a pane's executions from the states the detectors publish. Pure: the
clock and the states are given, the effects are checked."""

from __future__ import annotations

import msgspec
import pytest

from muxd.config import (
    EXECUTION_IDLE_SETTLE_S, EXECUTION_RESUBMIT_GAP_S, EXECUTION_RESUBMITS_MAX, EXECUTION_TURN_RECHECK_S,
    EXECUTION_TURN_UNSEEN_S, EXECUTION_TURN_UNSHOWN_S,
)
from muxd.detectors.state import Activity, AgentError, AgentSession, AgentState, Provenance
from muxd.errors import Conflict
from muxd.executions.record import Execution, new_execution_id
from muxd.executions.tracker import (
    Deliver, ExecutionTracker, Finish, Interrupt, Resubmit, Save, counters_only,
)


def state(activity: str, *, tokens: int | None = None, error: AgentError | None = None,
          cost: float | None = None) -> AgentState:
    return AgentState(pane_id="%1", agent_type="claude", is_agent=True, activity=Activity(state=activity),
                      session=AgentSession(tokens_used=tokens, cost_usd=cost), error=error)


def prompt(message: str = "do it", **fields: object) -> Execution:
    return Execution(id=new_execution_id(), pane_id="%1", pane_key="r/%1", agent_name="w1", message=message,
                     triggered_by="mcp", **fields)  # type: ignore[arg-type]


def only(effects: list[object], kind: type) -> object:
    found = [e for e in effects if isinstance(e, kind)]
    assert len(found) == 1, effects
    return found[0]


def idle_tracker() -> ExecutionTracker:
    tracker = ExecutionTracker("%1")
    tracker.state_changed(state("Idle"), 0.0)
    return tracker


def test_a_prompt_to_an_idle_agent_is_delivered_and_ends_when_the_agent_settles_at_its_prompt():
    tracker = idle_tracker()
    deliver = only(tracker.submit(prompt(), 10.0), Deliver)
    assert deliver.execution.status == "running" and deliver.execution.started_at == 10.0
    assert tracker.state_changed(state("Idle"), 10.1) == []  # not yet busy: the old prompt
    tracker.state_changed(state("Thinking", tokens=100), 10.5)
    tracker.state_changed(state("Generating", tokens=4800), 12.0)
    assert tracker.state_changed(state("Idle"), 13.0) == []  # must settle first
    assert tracker.due() == pytest.approx(13.0 + EXECUTION_IDLE_SETTLE_S)
    done = only(tracker.tick(13.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution
    assert done.status == "success" and done.tokens_used == 4800 and done.sources["tokens_used"] == "screen"
    assert done.duration_ms == int((13.0 + EXECUTION_IDLE_SETTLE_S - 10.0) * 1000)
    assert tracker.running is None


def test_a_flicker_through_the_prompt_between_tools_does_not_end_the_turn():
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("ToolUse"), 1.0)
    tracker.state_changed(state("Idle"), 2.0)
    tracker.state_changed(state("Thinking"), 2.5)
    assert tracker.tick(2.0 + EXECUTION_IDLE_SETTLE_S + 0.1) == []
    assert tracker.running is not None


def test_prompts_for_a_busy_agent_wait_in_order_and_run_when_it_is_next_at_its_prompt():
    tracker = idle_tracker()
    tracker.state_changed(state("Thinking"), 1.0)  # busy with something a person typed
    first, second = prompt("one"), prompt("two")
    assert only(tracker.submit(first, 2.0), Save).execution.status == "pending"
    tracker.submit(second, 3.0)
    assert tracker.queue_length == 2 and tracker.is_busy
    deliver = only(tracker.state_changed(state("Idle"), 4.0), Deliver)
    assert deliver.execution.id == first.id and tracker.queue_length == 1
    tracker.state_changed(state("Generating"), 5.0)
    tracker.state_changed(state("Idle"), 6.0)
    effects = tracker.tick(6.0 + EXECUTION_IDLE_SETTLE_S)
    assert only(effects, Finish).execution.id == first.id
    assert only(effects, Deliver).execution.id == second.id


def test_a_turn_too_short_to_be_seen_busy_ends_after_the_unseen_grace():
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Idle"), 0.2)
    assert tracker.tick(EXECUTION_IDLE_SETTLE_S + 0.3) == []
    assert tracker.due() == EXECUTION_TURN_UNSEEN_S  # not the settle time gone by: no tick at once again
    assert only(tracker.tick(EXECUTION_TURN_UNSEEN_S), Finish).execution.status == "success"


def test_an_unknown_state_after_delivery_asks_for_no_tick():
    # neither at the prompt nor busy (a screen the detector cannot place): only a new state decides
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Unknown"), 0.5)
    assert tracker.tick(EXECUTION_TURN_UNSEEN_S + 1) == [] and tracker.due() is None


def test_a_turn_that_ends_showing_an_api_error_fails_with_a_stack_hash_shared_by_the_same_error():
    hashes = []
    for seconds in (12, 3):
        tracker = idle_tracker()
        tracker.submit(prompt(), 0.0)
        tracker.state_changed(state("Thinking"), 1.0)
        err = AgentError(type="api_error", message=f"API Error: 500 internal, retry in {seconds}s")
        tracker.state_changed(state("Idle", error=err), 2.0)
        done = only(tracker.tick(2.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution
        assert done.status == "failed" and done.error is not None and done.error.type == "api_error"
        hashes.append(done.error.stack_hash)
    assert hashes[0] == hashes[1]


def test_an_error_the_agent_recovered_from_does_not_fail_the_turn():
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Thinking", error=AgentError(type="overloaded", message="529")), 1.0)
    tracker.state_changed(state("Generating"), 2.0)
    tracker.state_changed(state("Idle"), 3.0)
    assert only(tracker.tick(3.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution.status == "success"


def test_a_person_typing_at_the_prompt_starts_a_manual_execution_with_what_they_typed():
    tracker = idle_tracker()
    template = prompt(message=None)
    effects = tracker.state_changed(state("Thinking"), 1.0, manual=lambda: (template, "fix the bug"))
    started = only(effects, Save).execution
    assert started.triggered_by == "manual" and started.message == "fix the bug" and started.status == "running"
    tracker.state_changed(state("Idle"), 2.0)
    assert only(tracker.tick(2.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution.status == "success"


def test_cancel_interrupts_the_running_turn_and_drops_a_pending_one():
    tracker = idle_tracker()
    running, pending = prompt("a"), prompt("b")
    tracker.submit(running, 0.0)
    tracker.submit(pending, 0.5)
    assert only(tracker.cancel(pending.id, 1.0), Save).execution.status == "cancelled"
    effects = tracker.cancel(running.id, 2.0)
    assert only(effects, Interrupt).execution.id == running.id
    assert only(effects, Finish).execution.status == "cancelled"
    with pytest.raises(Conflict):
        tracker.cancel(running.id, 3.0)


def test_a_timeout_interrupts_and_records_timeout():
    tracker = idle_tracker()
    tracker.submit(prompt(timeout_s=5.0), 0.0)
    tracker.state_changed(state("Thinking"), 1.0)
    assert tracker.due() == 5.0
    effects = tracker.tick(5.0)
    assert only(effects, Interrupt) and only(effects, Finish).execution.status == "timeout"


def test_the_pane_exiting_fails_a_running_turn_on_a_non_zero_status_and_cancels_the_waiting():
    tracker = idle_tracker()
    tracker.state_changed(state("Thinking"), 0.5)
    tracker.submit(prompt("waits"), 0.6)
    effects = tracker.pane_exited(1, 1.0)
    assert only(effects, Save).execution.status == "cancelled"
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Thinking"), 0.5)
    done = only(tracker.pane_exited(2, 1.0), Finish).execution
    assert done.status == "failed" and done.exit_code == 2 and done.error.type == "pane_exited"


def test_a_command_ends_with_its_exit_status():
    tracker = ExecutionTracker("%1")
    tracker.start_command(prompt("make test"), 0.0)
    done = only(tracker.command_finished(2, 4.0), Finish).execution
    assert (done.kind, done.status, done.exit_code, done.duration_ms) == ("command", "failed", 2, 4000)
    assert done.error.type == "exit_status"
    tracker.start_command(prompt("true"), 5.0)
    assert only(tracker.pane_exited(0, 5.5), Finish).execution.status == "success"


def test_after_a_cancel_the_agent_winding_down_is_not_a_persons_turn_and_the_queue_waits_for_its_prompt():
    tracker = idle_tracker()
    running, queued = prompt("a"), prompt("b")
    tracker.submit(running, 0.0)
    tracker.submit(queued, 0.1)
    tracker.cancel(running.id, 0.2)  # the published state is still the Idle of before
    assert tracker.tick(0.3) == []
    template = prompt(message=None)
    assert tracker.state_changed(state("AwaitingConfirmation"), 0.4, manual=lambda: (template, None)) == []
    assert tracker.running is None
    deliver = only(tracker.state_changed(state("Idle"), 0.9, manual=lambda: (template, None)), Deliver)
    assert deliver.execution.id == queued.id


def test_a_turn_refused_at_once_with_no_state_published_ends_after_the_unseen_grace():
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    assert tracker.due() == EXECUTION_TURN_UNSEEN_S
    assert only(tracker.tick(EXECUTION_TURN_UNSEEN_S), Finish).execution.status == "success"


def test_an_unseen_turn_not_on_the_screen_yet_waits_until_it_is():
    # A loaded machine: the agent has not even taken the prompt when the unseen grace is over.
    tracker = idle_tracker()
    shown: list[bool] = [False]
    asked: list[str] = []
    tracker.turn_shown = lambda execution: asked.append(execution.message or "") or shown[0]
    tracker.submit(prompt("please answer"), 0.0)
    assert tracker.tick(EXECUTION_TURN_UNSEEN_S) == [] and asked == ["please answer"]
    assert tracker.due() == EXECUTION_TURN_UNSEEN_S + EXECUTION_TURN_RECHECK_S
    assert tracker.tick(EXECUTION_TURN_UNSEEN_S + EXECUTION_TURN_RECHECK_S) == []
    shown[0] = True  # the echo is on the screen now: the turn was short, and it is over
    now = EXECUTION_TURN_UNSEEN_S + 2 * EXECUTION_TURN_RECHECK_S
    assert only(tracker.tick(now), Finish).execution.status == "success"


def test_an_unseen_turn_never_shown_ends_after_the_longer_wait():
    tracker = idle_tracker()
    tracker.turn_shown = lambda execution: False
    tracker.submit(prompt(), 0.0)
    assert tracker.tick(EXECUTION_TURN_UNSHOWN_S - 0.1) == []
    assert only(tracker.tick(EXECUTION_TURN_UNSHOWN_S), Finish).execution.status == "success"


def test_an_unseen_turn_is_judged_only_on_a_screen_read_to_its_newest_frame():
    # Codex took the Enter (the prompt's echo is drawn) but the look that saw it busy waits for
    # its second look: ended now, the turn would come back a moment later as a person's.
    tracker = idle_tracker()
    settled = [False]
    tracker.screen_settled = lambda: settled[0]
    tracker.turn_shown = lambda execution: True
    tracker.prompt_waiting = lambda execution: pytest.fail("a draft from an older frame is no answer")
    tracker.submit(prompt("please answer"), 0.0)
    assert tracker.tick(EXECUTION_TURN_UNSEEN_S) == [] and tracker.running is not None
    assert tracker.due() == EXECUTION_TURN_UNSEEN_S + EXECUTION_TURN_RECHECK_S
    assert tracker.state_changed(state("Thinking"), EXECUTION_TURN_UNSEEN_S + 0.1) == []  # confirmed busy
    settled[0] = True
    tracker.state_changed(state("Idle"), 5.0)
    done = only(tracker.tick(5.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution
    assert done.status == "success" and done.completed_at == 5.0 + EXECUTION_IDLE_SETTLE_S


def test_an_unseen_turn_on_a_screen_never_settled_ends_after_the_longer_wait():
    tracker = idle_tracker()
    tracker.screen_settled = lambda: False
    tracker.turn_shown = lambda execution: True
    tracker.submit(prompt(), 0.0)
    now = EXECUTION_TURN_UNSEEN_S
    while now < EXECUTION_TURN_UNSHOWN_S:
        assert tracker.tick(now) == []
        now = tracker.due()
    assert only(tracker.tick(now), Finish).execution.status == "success"


def test_a_prompt_left_in_the_input_box_gets_enter_again_then_runs():
    # Codex took the Enter as part of the typing (the text reached it late): the box holds it.
    tracker = idle_tracker()
    waiting = [True]
    tracker.prompt_waiting = lambda execution: waiting[0]
    tracker.turn_shown = lambda execution: pytest.fail("the box holds the prompt: no echo to look for")
    tracker.submit(prompt("please answer"), 0.0)
    assert only(tracker.tick(EXECUTION_TURN_UNSEEN_S), Resubmit).execution.message == "please answer"
    now = EXECUTION_TURN_UNSEEN_S + EXECUTION_TURN_RECHECK_S
    assert tracker.due() == now and tracker.tick(now) == []  # not again at once
    waiting[0] = False
    tracker.state_changed(state("Thinking"), now + 0.1)  # the second Enter went through
    tracker.state_changed(state("Idle"), now + 2)
    assert only(tracker.tick(now + 2 + EXECUTION_IDLE_SETTLE_S), Finish).execution.status == "success"


def test_a_prompt_that_stays_in_the_input_box_fails_as_never_taken():
    tracker = idle_tracker()
    tracker.prompt_waiting = lambda execution: True
    tracker.submit(prompt("please answer"), 0.0)
    presses, now = 0, EXECUTION_TURN_UNSEEN_S
    while now < EXECUTION_TURN_UNSHOWN_S:
        presses += sum(isinstance(e, Resubmit) for e in tracker.tick(now))
        assert tracker.running is not None
        now = tracker.due()
    assert presses == EXECUTION_RESUBMITS_MAX and EXECUTION_RESUBMITS_MAX * EXECUTION_RESUBMIT_GAP_S < 15
    ended = only(tracker.tick(now), Finish).execution
    assert ended.status == "failed" and ended.error.type == "prompt_not_taken"
    assert "never submitted" in ended.error.message


def test_a_turn_seen_busy_ends_without_looking_at_the_screen():
    tracker = idle_tracker()
    tracker.turn_shown = lambda execution: pytest.fail("not asked for a turn seen busy")
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Thinking"), 0.5)
    tracker.state_changed(state("Idle"), 1.0)
    assert only(tracker.tick(1.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution.status == "success"


def hooked(activity: str, at: float, **fields: object) -> AgentState:
    """A state the agent's own hooks gave (the fusion's provenance), as of `at`."""
    said = Provenance(source="hook", observed_at=at, detail="hook")
    sources = {"state": said, **({"prompt": said} if "prompt" in fields else {})}
    return AgentState(pane_id="%1", agent_type="claude", is_agent=True, activity=Activity(state=activity),
                      sources=sources, **fields)  # type: ignore[arg-type]


def test_a_turn_the_hooks_report_takes_its_prompt_start_and_end_from_them():
    """A person's prompt: UserPromptSubmit gives the exact text and moment, Stop the moment it
    ended; the record says so in its sources (the screen's input box and settle give neither)."""
    tracker = ExecutionTracker("%1")
    tracker.state_changed(hooked("Idle", 1.0), 1.0)
    manual = prompt(message=None)
    tracker.state_changed(hooked("Thinking", 5.0, prompt="fix the flaky test"), 5.2,
                          manual=lambda: (manual, "fix the fl"))  # the box as last read: cut short
    running = tracker.running
    assert running is not None and running.message == "fix the flaky test" and running.started_at == 5.0
    assert running.sources["message"] == "hook" and running.sources["started_at"] == "hook"
    tracker.state_changed(hooked("Idle", 9.0), 9.3)
    done = only(tracker.tick(9.3 + EXECUTION_IDLE_SETTLE_S), Finish).execution
    assert done.status == "success" and done.completed_at == 9.0 and done.duration_ms == 4000
    assert done.sources["completed_at"] == "hook"


def test_a_persons_turn_seen_busy_before_its_prompt_hook_takes_the_hooks_prompt():
    """A loaded machine: the screen shows the turn busy before UserPromptSubmit reaches muxd,
    and the input box last held an older text (a prompt put back after an interrupt). The
    previous turn's prompt hook is no evidence; the new one, when it comes, is the message."""
    tracker = ExecutionTracker("%1")
    tracker.state_changed(hooked("Idle", 1.0, prompt="answer now"), 1.0)
    manual = prompt(message=None)
    busy = msgspec.structs.replace(hooked("Idle", 1.0, prompt="answer now"), activity=Activity(state="Thinking"))
    tracker.state_changed(busy, 20.0, manual=lambda: (manual, "think for long"))
    assert tracker.running.message == "think for long" and tracker.running.sources.get("message") != "hook"
    assert tracker.running.started_at == 20.0
    tracker.state_changed(hooked("Thinking", 20.2, prompt="typed by a person"), 20.3)
    assert tracker.running.message == "typed by a person" and tracker.running.sources["message"] == "hook"


def test_background_work_keeps_a_turn_open_at_the_prompt():
    """Claude Code's "Waiting for 1 background agent to finish": the prompt is back, the work
    is not done; the execution ends once the background work does."""
    tracker = idle_tracker()
    tracker.submit(prompt(), 0.0)
    tracker.state_changed(state("Thinking"), 1.0)
    waiting = msgspec.structs.replace(state("Idle"), background=1)
    tracker.state_changed(waiting, 2.0)
    assert tracker.due() is None and tracker.tick(60.0) == [] and tracker.running is not None
    tracker.state_changed(state("Idle"), 61.0)
    assert only(tracker.tick(61.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution.status == "success"


def shell_state() -> AgentState:
    return AgentState(pane_id="%1", agent_type="shell", is_agent=False, activity=Activity(state="Idle"))


def test_prompts_waiting_when_the_agent_exits_to_its_shell_are_not_typed_unless_forced():
    tracker = idle_tracker()
    in_front: list[str | None] = [None]
    tracker.shell_in_front = lambda: in_front[0]
    tracker.state_changed(state("Thinking"), 1.0)  # busy: what follows waits
    waiting, forced, later = prompt("hello"), prompt("ls"), prompt("again")
    tracker.submit(waiting, 2.0)
    tracker.submit(forced, 2.1, force=True)
    tracker.submit(later, 2.2)
    in_front[0] = "bash"  # the agent quit: its shell reads what is typed now
    effects = tracker.state_changed(shell_state(), 3.0)
    failed = [e.execution for e in effects if isinstance(e, Save)]
    assert [e.id for e in failed] == [waiting.id]
    assert failed[0].status == "failed" and failed[0].completed_at == 3.0 and failed[0].started_at is None
    assert failed[0].error is not None and failed[0].error.type == "no_agent"
    assert failed[0].error.message == ("no agent in %1: the agent exited before the prompt was delivered "
                                       "(bash runs there)")
    assert only(effects, Deliver).execution.id == forced.id  # forced: typed into the shell as asked
    assert [e.id for e in tracker.queue] == [later.id] and not tracker.forced


def test_a_prompt_for_an_agent_that_just_exited_is_not_typed_into_the_shell():
    # (muxd task run saw the agent at its prompt, then it quit before the task was sent)
    tracker = idle_tracker()
    tracker.shell_in_front = lambda: "zsh"
    effects = tracker.submit(prompt(), 5.0)
    ended = only(effects, Save).execution
    assert ended.status == "failed" and ended.error is not None and ended.error.type == "no_agent"
    assert "(zsh runs there)" in ended.error.message
    assert tracker.running is None and tracker.queue_length == 0
    assert only(tracker.submit(prompt(), 6.0, force=True), Deliver).execution.status == "running"


def test_a_cancelled_forced_prompt_is_forgotten():
    tracker = idle_tracker()
    tracker.state_changed(state("Thinking"), 1.0)
    queued = prompt()
    tracker.submit(queued, 2.0, force=True)
    tracker.cancel(queued.id, 3.0)
    assert not tracker.forced


def test_states_that_only_move_a_turns_counters_on_counted_when_the_next_comes_give_the_same_records():
    # The daemon's way with most states of a long turn: a run of them is given as its last, late.
    error = AgentError(type="api_error", message="overloaded")
    states = [state("Thinking", tokens=10), state("Thinking", tokens=40), state("Thinking", tokens=30, cost=0.5),
              state("Thinking", tokens=35, cost=0.6), state("Thinking", tokens=36), state("Generating", tokens=50),
              state("Generating", tokens=60, error=error), state("Generating", tokens=70),
              state("Generating", tokens=75), state("Idle"), state("Thinking", tokens=80),
              state("Thinking", tokens=90)]
    for timeout_s in (None, 60.0):
        for ends in ("settles", "cancelled", "exits"):
            plain, late, sent = idle_tracker(), idle_tracker(), prompt(timeout_s=timeout_s)
            for tracker in (plain, late):
                tracker.submit(sent, 1.0)
            left_out, before = 0, late.state
            for n, each in enumerate(states):
                now = 2.0 + n * 0.4
                expected = plain.state_changed(each, now)
                if counters_only(before, each):
                    left_out, got = left_out + 1, []
                else:
                    late.take_counters(before)
                    got = late.state_changed(each, now)
                before = each
                assert got == expected and late.due() == plain.due(), n
            # the tokens fell (40 -> 30), the cost went (0.6 -> none): those states are given
            assert left_out == 4 and late.state != plain.state
            end = 2.0 + len(states) * 0.4 + EXECUTION_IDLE_SETTLE_S
            late.take_counters(before)  # the daemon's catch-up before whatever may end the turn
            if ends == "settles":
                plain.state_changed(state("Idle"), end - 1.0)
                late.state_changed(state("Idle"), end - 1.0)
                ended, expected = late.tick(end), plain.tick(end)
            elif ends == "cancelled":
                ended, expected = late.cancel(sent.id, end), plain.cancel(sent.id, end)
            else:
                ended, expected = late.pane_exited(None, end), plain.pane_exited(None, end)
            assert ended == expected and late.running is None, (timeout_s, ends)
            assert only(ended, Finish).execution.tokens_used == 90  # the most seen, whichever way
            assert only(ended, Finish).execution.cost_usd == 0.6


def test_a_state_that_does_not_only_move_the_counters_on_is_not_taken_as_a_count():
    tracker = idle_tracker()
    tracker.submit(prompt(), 1.0)
    tracker.state_changed(state("Thinking", tokens=10), 2.0)
    for other in (state("Unknown"), state("Idle"), state("Generating", tokens=50), state("Thinking", tokens=5)):
        tracker.take_counters(other)  # (one it should have been given: no turn ends on a guess)
        assert tracker.state == state("Thinking", tokens=10), other
    tracker.take_counters(state("Thinking", tokens=20))
    tracker.state_changed(state("Idle"), 3.0)
    ended = only(tracker.tick(3.0 + EXECUTION_IDLE_SETTLE_S), Finish).execution
    assert ended.tokens_used == 20
