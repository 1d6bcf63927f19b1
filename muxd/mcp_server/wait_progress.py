"""MCP progress notifications of a running `wait_for`: how long it has waited of how long, and
what the panes it waits on are doing ("waiting on 3 panes for waiting; %2 Thinking, %1 Idle").

Sent only when the caller asked (its request carried a progress token): one at the start, one
every WAIT_PROGRESS_EVERY_S, and one soon after a pane's state changes; changes closer together
than WAIT_PROGRESS_GAP_S share one notification, which tells the latest states.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from muxd.mcp_server.limits import WAIT_PROGRESS_EVERY_S, WAIT_PROGRESS_GAP_S, WAIT_PROGRESS_PANES_SHOWN

log = logging.getLogger(__name__)


def progress_requested(ctx: Any) -> bool:
    """Whether the request behind `ctx` (an MCP Context, or None) carried a progress token."""
    if ctx is None:
        return False
    try:
        meta = ctx.request_context.meta
    except ValueError:  # a Context made outside a request
        return False
    return bool(meta) and meta.get("progress_token") is not None


class WaitProgress:
    """The progress of one wait. `what` says what it waits for; `states(pane, state)` as they change."""

    def __init__(self, ctx: Any, total_s: float, what: str) -> None:
        self.active = progress_requested(ctx)
        self._ctx = ctx
        self.total_s = total_s
        self.what = what
        self._started = time.monotonic()
        self._sent = -1.0  # the progress last sent: each must be greater (the spec wants it increasing)
        self._states: dict[str, str] = {}  # pane -> its state, the latest change first
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.active and self._task is None:
            self._task = asyncio.ensure_future(self._run())

    def seen(self, pane_id: str, state: str) -> None:
        """`pane_id`'s state when the wait began (named after those that changed since)."""
        self._states.setdefault(pane_id, state)

    def state(self, pane_id: str, state: str) -> None:
        """`pane_id`'s agent is now in `state`: tell it soon."""
        if self._states.get(pane_id) == state:
            return
        self._states.pop(pane_id, None)
        self._states = {pane_id: state, **self._states}
        self._changed.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def message(self) -> str:
        shown = [f"{pane} {state}" for pane, state in list(self._states.items())[:WAIT_PROGRESS_PANES_SHOWN]]
        more = len(self._states) - len(shown)
        if more > 0:
            shown.append(f"+{more} more")
        return f"{self.what}; {', '.join(shown)}" if shown else self.what

    async def _run(self) -> None:
        while True:
            self._changed.clear()  # what changed until now is in this notification
            if not await self._send():
                return
            sent_at = time.monotonic()
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow stop()'s cancel
                async with asyncio.timeout(WAIT_PROGRESS_EVERY_S):
                    await self._changed.wait()
            except TimeoutError:
                pass
            # Rate, not synchronisation: changes within the gap are told together.
            gap_s = WAIT_PROGRESS_GAP_S - (time.monotonic() - sent_at)
            if gap_s > 0:
                await asyncio.sleep(gap_s)

    async def _send(self) -> bool:
        elapsed_s = round(time.monotonic() - self._started, 3)
        progress = max(elapsed_s, round(self._sent + 0.001, 3))
        try:
            await self._ctx.report_progress(progress, self.total_s, self.message())
        except Exception as exc:  # the caller went away: the wait itself ends on its own terms
            log.debug("progress of a wait not sent: %r", exc)
            return False
        self._sent = progress
        return True
