"""The daemon's attention service: the bus, the board of who needs a person, and the events
the daemon's panes and executions make. Listeners (hooks on events, attached clients, subscribed
connections) `listen` on `bus`; the daemon and its commands `publish` what happened."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from muxd.daemon.attention.agent_events import execution_events, placement, state_events
from muxd.daemon.attention.board import AttentionBoard
from muxd.daemon.attention.bus import EventBus
from muxd.daemon.attention.recent import RecentEvents
from muxd.detectors.state import AgentState
from muxd.protocol.event_messages import EVENT_KINDS, DaemonEvent


class Attention:
    def __init__(self, find_pane: Callable[[str], Any | None], clock: Callable[[], float] = time.time) -> None:
        self.find_pane = find_pane  # pane id -> the pane, None once it is gone
        self.clock = clock
        self.bus = EventBus()
        self.board = AttentionBoard()
        self.bus.listen(self.board.take)
        self.recent = RecentEvents()  # what happened lately, for readers that were not listening
        self.bus.listen(self.recent.take)

    def agent_changed(self, pane: Any, before: AgentState, after: AgentState) -> None:
        for event in state_events(pane, before, after, self.clock()):
            self.bus.publish(event)

    def execution_ended(self, execution: Any) -> None:
        for event in execution_events(execution, self.find_pane(execution.pane_id), self.clock()):
            self.bus.publish(event)

    def pane_gone(self, pane_id: str) -> None:
        self.board.forget(pane_id)

    def publish(self, kind: str, pane: Any | None = None, **fields: Any) -> None:
        """Tell the bus `kind` happened (a tmux event: a session made, a window renamed, a bell),
        in `pane` if it was one's; `fields` are DaemonEvent's (session, window_id, …)."""
        assert kind in EVENT_KINDS, kind
        where = placement(pane) if pane is not None else {}
        self.bus.publish(DaemonEvent(kind=kind, at=self.clock(), **{**where, **fields}))


def window_fields(window: Any) -> dict[str, Any]:
    """The event fields naming a window and its session (for events of no one pane)."""
    session = window.session
    return {"window_id": window.id, "window_index": window.index, "window_name": window.name,
            "session": session.name, "session_id": session.id}


def session_fields(session: Any) -> dict[str, Any]:
    return {"session": session.name, "session_id": session.id}
