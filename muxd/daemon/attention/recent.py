"""The bus's last events, kept so a reader that was not listening (MCP's `muxd://events`, a
client that just connected) can still be told what happened lately. A bounded ring: the
oldest event goes when a new one comes past RECENT_EVENTS_MAX."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection

from muxd.protocol.event_messages import DaemonEvent

RECENT_EVENTS_MAX = 500  # events kept, of every kind and pane


class RecentEvents:
    def __init__(self, keep: int = RECENT_EVENTS_MAX) -> None:
        self._events: deque[DaemonEvent] = deque(maxlen=keep)

    def take(self, event: DaemonEvent) -> None:
        """A bus listener: remember the event."""
        self._events.append(event)

    def select(self, *, sees: Callable[[str | None], bool], kinds: Collection[str] | None = None,
               panes: Collection[str] | None = None, after: float | None = None, limit: int) -> list[DaemonEvent]:
        """The newest `limit` events (oldest first) that `sees` allows, of `kinds` and `panes`
        (None: any), that happened after `after`."""
        chosen: list[DaemonEvent] = []
        for event in reversed(self._events):
            if len(chosen) >= limit or (after is not None and event.at <= after):
                break
            if kinds is not None and event.kind not in kinds:
                continue
            if panes is not None and event.pane_id not in panes:
                continue
            if sees(event.pane_id):
                chosen.append(event)
        chosen.reverse()
        return chosen
