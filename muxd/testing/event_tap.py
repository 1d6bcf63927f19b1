"""Test support: the daemon's events heard on a subscribed connection, for synchronous tests.

`EventTap(server)` connects (in a thread of its own, with its own event loop), subscribes with
`events=True` and keeps every DaemonEvent; `wait_for(kind, pane_id)` returns the first one of
that kind, `close()` hangs up. Tests that drive an outer terminal with blocking tmux commands
use it to learn when the daemon published something (an event's `at`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from muxd.protocol.event_messages import DaemonEvent
from muxd.protocol.messages import Subscribe
from muxd.testing.patience import event_set, stretched
from muxd.testing.wait import wait_until

CONNECT_TIMEOUT_S = 10.0


class EventTap:
    def __init__(self, server: Any) -> None:
        self.events: list[DaemonEvent] = []
        self.arrivals: list[float] = []  # the wall-clock time each event arrived, by index
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._run(server),),
                                        daemon=True)
        self._thread.start()
        if not event_set(self._ready, CONNECT_TIMEOUT_S) or self._failure is not None:
            raise AssertionError(f"could not subscribe to the daemon's events: {self._failure!r}")

    async def _run(self, server: Any) -> None:
        self._stop = asyncio.Event()
        try:
            client = await server.client(on_event=self._heard)
            await client.call(Subscribe, events=True)
        except BaseException as exc:
            self._failure = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await client.close()

    def _heard(self, event: object) -> None:
        if isinstance(event, DaemonEvent):
            with self._lock:
                self.events.append(event)
                self.arrivals.append(time.time())

    def find(self, kind: str, pane_id: str | None = None) -> DaemonEvent | None:
        with self._lock:
            return next((e for e in self.events if e.kind == kind and pane_id in (None, e.pane_id)), None)

    def wait_for(self, kind: str, pane_id: str | None = None, *, timeout: float = 20.0) -> DaemonEvent:
        found = wait_until(lambda: self.find(kind, pane_id), timeout=timeout, message=f"event {kind} {pane_id or ''}")
        assert found is not None
        return found

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(stretched(CONNECT_TIMEOUT_S))
        self._loop.close()
