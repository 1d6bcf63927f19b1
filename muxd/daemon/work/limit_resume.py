"""Resuming an agent a usage limit stopped, once the limit resets (the `limit-resume` option).

When a pane's agent turns UsageLimited with a reset time (`limit.resets_at`), a timer is set
for that time; when it fires, if the agent still waits on that same limit (it did not go on by
itself: Claude Code continues on its own when its 5-hour limit resets), no dialog is up (a
limit dialog takes a choice, not a prompt) and `limit-resume` is on for the pane (pane, window
or global, read then, so setting it later still counts), muxd submits `limit-resume-prompt` as
an execution triggered by `schedule`. A limit with no reset time is never resumed: muxd would
have to guess.

The agents show the reset to the minute, rounded down, so the first resume may come up to a
minute early and meet the limit again, showing the same reset: the next try comes
LIMIT_RESUME_RETRY_S after the last, at most LIMIT_RESUMES_MAX times for one reset.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from muxd.config import EXECUTION_TIMEOUT_DEFAULT_S
from muxd.detectors.state import AgentState, UsageLimit
from muxd.errors import MuxdError

if TYPE_CHECKING:
    from muxd.daemon.panes.options import Options
    from muxd.daemon.panes.pane import Pane
    from muxd.executions.record import Execution

log = logging.getLogger(__name__)

LIMIT_RESUME_GRACE_S = 1.0    # after the reset the agent names: its clock and ours may differ a little
LIMIT_RESUME_RETRY_S = 60.0   # between tries at the same reset (it is shown to the minute)
LIMIT_RESUMES_MAX = 3         # tries at one reset before muxd leaves the agent to a person
RESUME_PRINCIPAL = "system"   # who the history says sent the prompt: muxd itself


class Submit(Protocol):
    """ExecutionService.submit: a prompt for a pane's agent, recorded like any other."""

    async def __call__(self, pane: Pane, principal: str, **fields: Any) -> tuple[Execution, bool]: ...


class Timer(Protocol):
    def cancel(self) -> None: ...


# The loop's call_later (what a test gives instead: a clock of its own).
CallLater = Callable[..., Timer]


@dataclass
class _Wait:
    limit: UsageLimit
    at: float                      # wall-clock time to resume
    timer: Timer


@dataclass
class _Tried:
    resets_at: float               # the reset last resumed at
    at: float                      # when
    count: int                     # tries at that reset


class LimitResume:
    """Timers that resume usage-limited agents at their reset, for panes whose option says so."""

    def __init__(self, options: Options, submit: Submit, clock: Callable[[], float] = time.time,
                 call_later: CallLater | None = None) -> None:
        self.options = options
        self.submit = submit
        self.clock = clock
        self._call_later = call_later
        self._waits: dict[str, _Wait] = {}
        self._tried: dict[str, _Tried] = {}
        self._jobs: set[asyncio.Task[None]] = set()

    def agent_changed(self, pane: Pane, state: AgentState) -> None:
        """A new published state for `pane`: a timer for a new limit's reset, none for an agent
        no longer waiting on one."""
        limit = state.limit if state.activity.state == "UsageLimited" else None
        wait = self._waits.get(pane.id)
        if wait is not None and wait.limit == limit:
            return
        self._cancel(pane.id)
        if limit is None or limit.resets_at is None:
            return
        at = self._when(pane.id, limit.resets_at)
        if at is None:
            log.warning("pane %s: the usage limit (%s) came back after %d resumes at its reset: not resumed again",
                        pane.id, limit.message, LIMIT_RESUMES_MAX)
            return
        self._arm(pane, limit, at)

    def forget(self, pane_id: str) -> None:
        """The pane is gone."""
        self._cancel(pane_id)
        self._tried.pop(pane_id, None)

    def resume_at(self, pane_id: str) -> float | None:
        """When `pane_id`'s agent is to be sent its resume prompt (wall clock), if a timer is set."""
        wait = self._waits.get(pane_id)
        return wait.at if wait is not None else None

    def close(self) -> None:
        for pane_id in list(self._waits):
            self._cancel(pane_id)
        for job in self._jobs:
            job.cancel()

    # ------------------------------------------------------------ timers

    def _when(self, pane_id: str, resets_at: float) -> float | None:
        at = resets_at + LIMIT_RESUME_GRACE_S
        tried = self._tried.get(pane_id)
        if tried is not None and resets_at <= tried.resets_at:  # met again before it lifted
            if tried.count >= LIMIT_RESUMES_MAX:
                return None
            at = max(at, tried.at + LIMIT_RESUME_RETRY_S)
        return at

    def _arm(self, pane: Pane, limit: UsageLimit, at: float) -> None:
        call_later = self._call_later or asyncio.get_running_loop().call_later
        timer = call_later(max(0.0, at - self.clock()), self._fire, pane, limit)
        self._waits[pane.id] = _Wait(limit, at, timer)

    def _cancel(self, pane_id: str) -> None:
        wait = self._waits.pop(pane_id, None)
        if wait is not None:
            wait.timer.cancel()

    def _fire(self, pane: Pane, limit: UsageLimit) -> None:
        wait = self._waits.pop(pane.id, None)
        if wait is None:
            return
        if self.clock() < wait.at - LIMIT_RESUME_GRACE_S:  # the wall clock was set back: not yet
            self._arm(pane, limit, wait.at)
            return
        state = pane.agent
        if pane.exited or state.activity.state != "UsageLimited" or state.limit != limit:
            return  # it went on by itself, or something else happened meanwhile
        window = getattr(pane.window, "id", None)
        ids = [pane.id] + ([window] if isinstance(window, str) else [])
        if not self.options.flag("limit-resume", *ids):
            return
        if state.confirmation is not None:
            log.info("pane %s: its usage limit reset, but a dialog about it waits for a choice: not resumed", pane.id)
            return
        assert limit.resets_at is not None  # (a limit with no reset sets no timer)
        tried = self._tried.get(pane.id)
        again = tried is not None and limit.resets_at <= tried.resets_at  # (as _when counts them)
        self._tried[pane.id] = (_Tried(tried.resets_at, self.clock(), tried.count + 1) if again and tried
                                else _Tried(limit.resets_at, self.clock(), 1))
        prompt = self.options.lookup("limit-resume-prompt", *ids)
        log.info("pane %s: its usage limit reset: sending %r", pane.id, prompt)
        job = asyncio.get_running_loop().create_task(self._send(pane, prompt))
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)

    async def _send(self, pane: Pane, prompt: str) -> None:
        try:
            await self.submit(pane, RESUME_PRINCIPAL, triggered_by="schedule", message=prompt,
                              timeout_s=EXECUTION_TIMEOUT_DEFAULT_S)
        except MuxdError as exc:  # the pane exited, the history is off, its queue is full
            log.warning("pane %s: resuming after its usage limit failed: %s", pane.id, exc)
