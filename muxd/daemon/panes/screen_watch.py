"""`ScreenWatch`: requests waiting for a pane's screen to change (screen-html with `after`).

The web view shows a pane live by asking for its screen again as soon as the pane has output,
not on a timer: the request waits here until the pane's next output (or exit), or a change of
its work: its agent's state, an execution of it ending (a turn ends after the screen has gone
quiet: the page's list of executions hears of it so), then answers. A pane nobody watches costs one dict lookup per output.
"""

from __future__ import annotations

import asyncio


OUTPUT = "output"
WORK = "work"


class ScreenWatch:
    """Futures by pane id, each woken by the pane's next output (or exit) or change of work."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[asyncio.Future[str]]] = {}

    def output(self, pane_id: str) -> None:
        """The pane had output (or exited, or went): wake whoever waits for it."""
        self._wake(pane_id, OUTPUT)

    def work_changed(self, pane_id: str) -> None:
        """The pane's agent changed state, or one of its executions ended."""
        self._wake(pane_id, WORK)

    def _wake(self, pane_id: str, reason: str) -> None:
        futures = self._waiting.pop(pane_id, None)
        for future in futures or ():
            if not future.done():
                future.set_result(reason)

    async def next_change(self, pane_id: str, timeout_s: float) -> str | None:
        """Wait for the pane's next output or change of work, at most `timeout_s`: which came
        (OUTPUT, WORK), or None if neither."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(pane_id, []).append(future)
        try:
            return await asyncio.wait_for(future, timeout_s)
        except asyncio.TimeoutError:
            return None
        finally:
            waiting = self._waiting.get(pane_id)
            if waiting is not None and future in waiting:
                waiting.remove(future)
                if not waiting:
                    del self._waiting[pane_id]

    def __len__(self) -> int:
        """How many requests wait."""
        return sum(len(futures) for futures in self._waiting.values())
