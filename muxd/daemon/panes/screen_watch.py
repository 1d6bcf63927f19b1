"""`ScreenWatch`: requests waiting for a pane's screen to change (screen-html with `after`).

The web view shows a pane live by asking for its screen again as soon as the pane has output,
not on a timer: the request waits here until the pane's next output (or its exit), then reads
the screen. A pane nobody watches costs one dict lookup per output.
"""

from __future__ import annotations

import asyncio


class ScreenWatch:
    """Futures by pane id, each woken by the pane's next output or exit."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[asyncio.Future[None]]] = {}

    def output(self, pane_id: str) -> None:
        """The pane had output (or exited, or went): wake whoever waits for it."""
        futures = self._waiting.pop(pane_id, None)
        for future in futures or ():
            if not future.done():
                future.set_result(None)

    async def next_output(self, pane_id: str, timeout_s: float) -> bool:
        """Wait for the pane's next output, at most `timeout_s`; False if none came."""
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
