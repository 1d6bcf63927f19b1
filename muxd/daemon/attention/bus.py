"""The daemon's event bus: everything that happened, told to every listener in the order it
happened. Listeners run on the loop and must not block; one that raises loses that event, not
the bus (the others still hear it)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from muxd.protocol.event_messages import DaemonEvent

log = logging.getLogger(__name__)

Listener = Callable[[DaemonEvent], None]


class EventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def publish(self, event: DaemonEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener %r failed on %s", listener, event.kind)
