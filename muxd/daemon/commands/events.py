"""list-events: the bus's recent events a connection may see (MCP's `muxd://events` reads them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.access.control import current_principal
from muxd.daemon.commands.table import command
from muxd.errors import BadRequest
from muxd.protocol.event_messages import EVENTS_LIMIT_MAX, EventList, ListEvents, check_kinds

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


@command(ListEvents)
async def list_events(daemon: Daemon, req: ListEvents) -> EventList:
    if not 1 <= req.limit <= EVENTS_LIMIT_MAX:
        raise BadRequest(f"limit must be between 1 and {EVENTS_LIMIT_MAX}, got {req.limit}", field="limit")
    check_kinds(req.kinds)
    access, principal = daemon.access, current_principal()
    every_pane = access.visible(principal) is None

    def sees(pane_id: str | None) -> bool:
        # As a subscriber hears them: events of no pane only for who sees every pane.
        return every_pane if pane_id is None else access.sees(principal, pane_id)

    events = daemon.attention.recent.select(sees=sees, kinds=req.kinds, panes=req.panes, after=req.after,
                                            limit=req.limit)
    return EventList(id=req.id, events=events)
