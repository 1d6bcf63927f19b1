"""UsageLimited from the screen and from the hooks (a StopFailure on a limit), fused as every
other state is: which wins when, the `limit` and its source, and the reset a relative wait
keeps from its first sighting. A fake clock and real Detection objects, as in
test_detector_fusion.py."""

from __future__ import annotations

from datetime import datetime, timezone

from muxd.detectors.hook_events import hook_fact
from muxd.detectors.state import UsageLimit
from test_detector_fusion import clock, hook, runner, screen, show  # noqa: F401 (the fixtures too)

LIMIT = UsageLimit(message="You've hit your 5-hour limit · resets 9:21pm (UTC)",
                   resets_at=datetime(2026, 11, 28, 21, 21, tzinfo=timezone.utc).timestamp())


def limited(runner, screen, limit=LIMIT):  # noqa: F811
    return show(runner, screen, "UsageLimited", rule="usage-limit", limit=limit)


def test_the_screen_alone_shows_the_limit(runner, screen, clock):  # noqa: F811
    state = limited(runner, screen)
    assert state.activity.state == "UsageLimited" and state.limit == LIMIT
    assert state.sources["limit"].source == "screen" and state.sources["limit"].detail == "usage-limit"
    assert not state.is_awaiting_input and not state.is_awaiting_confirmation
    clock.now += 1
    state = show(runner, screen, "Idle")  # the limit is no longer drawn (a /clear)
    assert state.limit is None and "limit" not in state.sources


def test_a_stop_failure_on_a_limit_claims_usage_limited_with_its_reset(runner, screen, clock):  # noqa: F811
    show(runner, screen, "Idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 1
    # Claude Code's own payload, through the hook reader: `error` rate_limit, its words.
    fact = hook_fact("claude", {"hook_event_name": "StopFailure", "error": "rate_limit",
                                "last_assistant_message": LIMIT.message}, clock.now)
    assert fact is not None and fact.error_type == "usage_limit"
    state = runner.hook(fact)
    assert state is not None and state.activity.state == "UsageLimited" and state.fusion.rule == "hook-newer"
    assert state.limit is not None and state.limit.message == LIMIT.message
    reset = datetime.fromtimestamp(state.limit.resets_at, timezone.utc)
    assert (reset.hour, reset.minute) == (21, 21) and state.sources["limit"].detail == "StopFailure"
    assert state.error.type == "usage_limit"
    # The screen then draws it: both agree, the screen's words for the limit.
    clock.now += 0.3
    state = limited(runner, screen)
    assert state.fusion.rule == "agree" and state.confidence == "certain" and state.limit == LIMIT
    # The next prompt ends it, hook first.
    clock.now += 5
    state = hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="continue")
    assert state.activity.state == "Thinking" and state.limit is None and "limit" not in state.sources


def test_a_429_the_agent_gave_up_on_is_a_limit_with_no_reset(runner, screen, clock):  # noqa: F811
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 1
    fact = hook_fact("claude", {"hook_event_name": "StopFailure", "error": "rate_limit",
                                "last_assistant_message": "API Error: Request rejected (429) · Rate limited"},
                     clock.now)
    state = runner.hook(fact)
    assert state.activity.state == "UsageLimited" and state.error.type == "rate_limited"
    assert state.limit == UsageLimit(message="API Error: Request rejected (429) · Rate limited", resets_at=None)


def test_other_stop_failures_end_the_turn_at_rest(runner, screen, clock):  # noqa: F811
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 1
    fact = hook_fact("claude", {"hook_event_name": "StopFailure", "error": "overloaded",
                                "last_assistant_message": "API Error: 529 Overloaded"}, clock.now)
    state = runner.hook(fact)
    assert state.activity.state == "Idle" and state.limit is None and state.error.type == "overloaded"


def test_a_limit_on_screen_ends_the_turn_no_hook_ended(runner, screen, clock):  # noqa: F811
    # Codex fires no hook when its turn ends on a usage limit: the screen's word stands, and a
    # screen at its prompt afterwards is not held as the hooks' open turn.
    show(runner, screen, "Idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 0.5
    show(runner, screen, "Thinking")
    clock.now += 1
    state = limited(runner, screen)
    assert state.activity.state == "UsageLimited" and not runner.hooks.turn_open
    assert state.confidence == "screen" and state.sources["state"].detail == "turn-ended"  # the screen's word
    clock.now += 2
    state = show(runner, screen, "Idle")
    assert state.activity.state == "Idle" and state.fusion.rule != "open-turn"


def test_a_busy_screen_just_after_the_limit_is_its_tail(runner, screen, clock):  # noqa: F811
    show(runner, screen, "Idle")
    clock.now += 1
    hook(runner, clock, "prompt_submitted", "UserPromptSubmit", prompt="go")
    clock.now += 0.5
    runner.hook(hook_fact("claude", {"hook_event_name": "StopFailure", "error": "rate_limit",
                                     "last_assistant_message": LIMIT.message}, clock.now))
    clock.now += 0.2
    state = show(runner, screen, "Thinking")  # the turn drawn late, after its end: its tail
    assert state.activity.state == "UsageLimited" and state.fusion.rule == "closed-turn"


def test_a_relative_wait_keeps_the_reset_of_its_first_sighting(runner, screen, clock):  # noqa: F811
    first = show(runner, screen, "UsageLimited", agent_type="gemini", limit=UsageLimit(
        message="[API Error: quota exceeded]", resets_at=clock.now + 400))
    clock.now += 30  # the same words read again 30 s on: "retry in 400s" is from when it was drawn
    again = show(runner, screen, "UsageLimited", agent_type="gemini", limit=UsageLimit(
        message="[API Error: quota exceeded]", resets_at=clock.now + 400))
    assert again.limit == first.limit and again.sources["limit"].observed_at == first.sources["limit"].observed_at
