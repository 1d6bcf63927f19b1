"""LimitResume (daemon/work/limit_resume.py): the timer that sends a usage-limited agent its
resume prompt at the reset, read against the pane's options then. On a real event loop, with
the wall clock moved instead of waited for; the submit path is recorded (the daemon's own is
tested through a real daemon in test_agents_real_usage_limits.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from muxd.daemon.panes.options import Options
from muxd.daemon.work.limit_resume import LIMIT_RESUME_GRACE_S, LIMIT_RESUME_RETRY_S, LIMIT_RESUMES_MAX, LimitResume
from muxd.detectors.state import Activity, AgentState, Confirmation, UsageLimit
from muxd.errors import Conflict

RESET = 10_000.0
LIMIT = UsageLimit(message="You've hit your usage limit", resets_at=RESET)


class Timers:
    """The wall clock and the timers set on it: `at(when)` moves the clock and fires what is due."""

    def __init__(self) -> None:
        self.now = RESET - 3600
        self.pending: list[Timer] = []

    def __call__(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Any, *args: Any) -> Timer:
        timer = Timer(self.now + delay, callback, args)
        self.pending.append(timer)
        return timer

    async def at(self, when: float) -> None:
        self.now = when
        for timer in sorted(self.pending, key=lambda t: t.due):
            if not timer.cancelled and timer.due <= when:
                timer.cancel()
                timer.callback(*timer.args)
        for _ in range(3):  # the submit's task runs
            await asyncio.sleep(0)


class Timer:
    def __init__(self, due: float, callback: Any, args: tuple[Any, ...]) -> None:
        self.due, self.callback, self.args, self.cancelled = due, callback, args, False

    def cancel(self) -> None:
        self.cancelled = True


def limited(limit: UsageLimit | None = LIMIT, *, dialog: bool = False) -> AgentState:
    return AgentState(pane_id="%1", agent_type="codex", is_agent=True, activity=Activity(state="UsageLimited"),
                      limit=limit, confirmation=Confirmation(prompt="Keep trying?") if dialog else None)


BUSY = AgentState(pane_id="%1", agent_type="codex", is_agent=True, activity=Activity(state="Thinking"))


class Harness:
    """A pane, its options, the resume service on its own clock, and what it submitted."""

    def __init__(self) -> None:
        self.timers = Timers()
        self.options = Options()
        self.pane = SimpleNamespace(id="%1", window=SimpleNamespace(id="@1"), exited=False, agent=AgentState())
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.refuse = False
        self.resume = LimitResume(self.options, self._submit, clock=self.timers, call_later=self.timers.call_later)

    async def _submit(self, pane: Any, principal: str, **fields: Any) -> tuple[Any, bool]:
        if self.refuse:
            raise Conflict(f"pane {pane.id} has exited", pane=pane.id)
        self.sent.append((principal, fields))
        return None, True

    def show(self, state: AgentState) -> None:
        self.pane.agent = state
        self.resume.agent_changed(self.pane, state)

    async def at(self, when: float) -> None:
        await self.timers.at(when)


def test_off_by_default_then_on_for_the_pane_at_the_reset() -> None:
    async def go(h: Harness) -> None:
        h.show(limited())
        assert h.resume.resume_at("%1") == RESET + LIMIT_RESUME_GRACE_S
        await h.at(RESET + LIMIT_RESUME_GRACE_S)
        assert h.sent == []  # limit-resume is off by default
        h.options.set("limit-resume", "on", "%1")  # set on the pane while it waits: read at the reset
        h.show(limited(UsageLimit(message="again", resets_at=RESET + 60)))
        await h.at(RESET + 59)
        assert h.sent == []
        await h.at(RESET + 60 + LIMIT_RESUME_GRACE_S)
        assert h.sent == [("system", {"triggered_by": "schedule", "message": "continue", "timeout_s": 1800.0})]

    asyncio.run(go(Harness()))


def test_the_prompt_is_the_windows_or_the_global_option() -> None:
    async def go(h: Harness) -> None:
        h.options.set("limit-resume", "on", None)  # set -gw
        h.options.set("limit-resume-prompt", "please go on", "@1")  # set -w on its window
        h.show(limited())
        await h.at(RESET + LIMIT_RESUME_GRACE_S)
        assert [fields["message"] for _, fields in h.sent] == ["please go on"]

    asyncio.run(go(Harness()))


def test_no_resume_without_a_reset_in_a_dialog_or_once_it_went_on() -> None:
    async def go(h: Harness) -> None:
        h.options.set("limit-resume", "on", None)
        h.show(limited(UsageLimit(message="429", resets_at=None)))  # the agent did not say when
        assert h.resume.resume_at("%1") is None
        h.show(limited(dialog=True))  # Gemini's "Keep trying / Stop": a choice, not a prompt
        await h.at(RESET + LIMIT_RESUME_GRACE_S)
        assert h.sent == []
        h.timers.now = RESET - 100
        h.show(limited(UsageLimit(message="later", resets_at=RESET + 500)))
        h.show(BUSY)  # it went on by itself (Claude Code continues on its own): nothing left to do
        assert h.resume.resume_at("%1") is None
        await h.at(RESET + 600)
        assert h.sent == []

    asyncio.run(go(Harness()))


def test_a_limit_met_again_at_the_same_reset_is_tried_a_minute_on_a_few_times() -> None:
    async def go(h: Harness) -> None:
        h.options.set("limit-resume", "on", None)
        h.show(limited())
        tried = []
        for _ in range(LIMIT_RESUMES_MAX):
            due = h.resume.resume_at("%1")
            tried.append(due)
            await h.at(due)
            h.show(BUSY)
            h.show(limited())  # the reset was shown to the minute, rounded down: still limited
        assert len(h.sent) == LIMIT_RESUMES_MAX
        assert [b - a for a, b in zip(tried, tried[1:])] == [LIMIT_RESUME_RETRY_S] * (LIMIT_RESUMES_MAX - 1)
        assert h.resume.resume_at("%1") is None  # given up: left to a person
        h.show(BUSY)
        h.show(limited(UsageLimit(message="next", resets_at=RESET + 86_400)))  # a later reset: a new limit
        assert h.resume.resume_at("%1") == RESET + 86_400 + LIMIT_RESUME_GRACE_S

    asyncio.run(go(Harness()))


def test_a_pane_gone_or_refusing_is_no_failure_of_the_daemon(caplog) -> None:
    async def go(h: Harness) -> None:
        h.options.set("limit-resume", "on", None)
        h.show(limited())
        h.resume.forget("%1")
        assert h.resume.resume_at("%1") is None
        h.show(limited(UsageLimit(message="b", resets_at=RESET)))
        h.refuse = True
        await h.at(RESET + LIMIT_RESUME_GRACE_S)
        assert h.sent == [] and "resuming after its usage limit failed" in caplog.text
        h.show(limited(UsageLimit(message="c", resets_at=RESET + 10)))
        h.resume.close()
        assert h.resume.resume_at("%1") is None

    asyncio.run(go(Harness()))
