"""`Settlements`: how the writer thread's saves went, handed to the loop that waits for them,
a batch's at once in one wake-up of the loop. A batch of rows (SaveBatches) tells each of its
savers; one `call_soon_threadsafe` per saver was a write to the loop's wake-up pipe and a trip
through the GIL each (the loop woke between them), about as much of the writer's time as the
commit (issue 29)."""

from __future__ import annotations

import asyncio
import threading


class Settlements:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], Exception | None]]] = {}

    def add(self, loop: asyncio.AbstractEventLoop, stored: asyncio.Future[None], failure: Exception | None) -> None:
        """(On any thread.) `stored` is to get `failure`, or its result if None, on `loop`, once
        `hand_over` is called."""
        with self._lock:
            self._waiting.setdefault(loop, []).append((stored, failure))

    def hand_over(self) -> None:
        """(On any thread, after a batch.) Each loop settles what waits for it, in one wake-up."""
        with self._lock:
            loops = list(self._waiting)
        for loop in loops:
            try:
                loop.call_soon_threadsafe(self._settle, loop)
            except RuntimeError:  # the loop is closed: nobody waits any more
                with self._lock:
                    self._waiting.pop(loop, None)

    def _settle(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            waiting = self._waiting.pop(loop, [])
        for stored, failure in waiting:
            if stored.done():
                continue  # the saver stopped waiting (cancelled); the write went on
            if failure is None:
                stored.set_result(None)
            else:
                stored.set_exception(failure)
