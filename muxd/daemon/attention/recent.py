"""The bus's last events, kept so a reader that was not listening (MCP's `muxd://events`, a
client that just connected) can still be told what happened lately. A bounded ring: the
oldest event goes when a new one comes past RECENT_EVENTS_MAX. The opt-in kinds (a tool call
each) have a ring of their own, so a busy MCP client never pushes the agents' events out."""

from __future__ import annotations

from collections import deque
from heapq import merge
from collections.abc import Callable, Collection, Sequence

from muxd.protocol.event_messages import OPT_IN_EVENT_KINDS, PULSE_EVENT_KINDS, DaemonEvent, wanted

RECENT_EVENTS_MAX = 500  # events kept, of every kind and pane
RECENT_OPT_IN_EVENTS_MAX = 200  # and of the opt-in kinds (tool-called)


class RecentEvents:
    def __init__(self, keep: int = RECENT_EVENTS_MAX, keep_opt_in: int = RECENT_OPT_IN_EVENTS_MAX) -> None:
        self._events: deque[DaemonEvent] = deque(maxlen=keep)
        self._opt_in: deque[DaemonEvent] = deque(maxlen=keep_opt_in)

    def take(self, event: DaemonEvent) -> None:
        """A bus listener: remember the event (not a live board's pulse: a task's history is get-task's,
        a fleet's is in what its hosts publish)."""
        if event.kind in PULSE_EVENT_KINDS:
            return
        (self._opt_in if event.kind in OPT_IN_EVENT_KINDS else self._events).append(event)

    def select(self, *, sees: Callable[[str | None], bool], kinds: Collection[str] | None = None,
               panes: Collection[str] | None = None, after: float | None = None, limit: int) -> list[DaemonEvent]:
        """The newest `limit` events (oldest first) that `sees` allows, of `kinds` and `panes`
        (None: any), that happened after `after`."""
        chosen: list[DaemonEvent] = []
        asked_opt_in = kinds is not None and not OPT_IN_EVENT_KINDS.isdisjoint(kinds)
        ordered: Sequence[DaemonEvent] = (list(merge(self._events, self._opt_in, key=lambda e: e.at))
                                          if asked_opt_in else self._events)
        for event in reversed(ordered):
            if len(chosen) >= limit or (after is not None and event.at <= after):
                break
            if not wanted(event.kind, kinds):
                continue
            if panes is not None and event.pane_id not in panes:
                continue
            if sees(event.pane_id):
                chosen.append(event)
        chosen.reverse()
        return chosen
