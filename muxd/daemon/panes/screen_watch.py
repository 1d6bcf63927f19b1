"""`ScreenWatch`: requests waiting for a pane's screen or work to change (screen-html with `after`).

The web view shows a pane live by asking for its screen again as soon as the pane has output,
not on a timer: the request waits here until the pane's next output (or exit), or a change of
its work: its agent's state, an execution of it ending (a turn ends after the screen has gone
quiet: the page's list of executions hears of it so), then answers. Work changes are counted
per pane (`work_version`), so one that comes between two requests is not missed. A pane nobody
watches costs one dict lookup per output.
"""

from __future__ import annotations

import asyncio


class ScreenWatch:
    """Futures by pane id, each woken by the pane's next output (or exit) or change of work."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[asyncio.Future[None]]] = {}
        self._work: dict[str, int] = {}

    def output(self, pane_id: str) -> None:
        """The pane had output (or exited): wake whoever waits for it."""
        self._wake(pane_id)

    def work_changed(self, pane_id: str) -> None:
        """The pane's agent changed state, or one of its executions ended."""
        self._work[pane_id] = self._work.get(pane_id, 0) + 1
        self._wake(pane_id)

    def work_version(self, pane_id: str) -> int:
        """How many times the pane's work changed (0 before the first)."""
        return self._work.get(pane_id, 0)

    def pane_gone(self, pane_id: str) -> None:
        self._work.pop(pane_id, None)
        self._wake(pane_id)

    def _wake(self, pane_id: str) -> None:
        futures = self._waiting.pop(pane_id, None)
        for future in futures or ():
            if not future.done():
                future.set_result(None)

    async def next_change(self, pane_id: str, timeout_s: float) -> bool:
        """Wait for the pane's next output or change of work, at most `timeout_s`; False if none came."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(pane_id, []).append(future)
        try:
            await asyncio.wait_for(future, timeout_s)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            waiting = self._waiting.get(pane_id)
            if waiting is not None and future in waiting:
                waiting.remove(future)
                if not waiting:
                    del self._waiting[pane_id]

    def __len__(self) -> int:
        """How many requests wait."""
        return sum(len(futures) for futures in self._waiting.values())
