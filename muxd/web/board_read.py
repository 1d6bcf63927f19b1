"""The agents board one live feed shows, kept between the daemon's events: what to read again.

The first read (and one after an event that names no pane: a session renamed, a window closed)
lists every pane, as `muxd top` does; after an event about one pane's agent, only that pane is
read again (ShowPane), with the executions. Listing 50 panes costs the daemon ~50 times one
pane's record, and each token watching has a feed of its own. The other hosts' panes of a shared
database are read again after every read's events, and alone after a fleet-changed event (another
daemon published, went stale, came back: daemon/work/fleet_news.py).
"""

from __future__ import annotations

import msgspec

from muxd.cli.top_live import read_board, read_executions
from muxd.client.connection import Client
from muxd.errors import NotFound
from muxd.executions.record import Execution
from muxd.protocol.event_messages import EVENT_KINDS, FLEET_EVENT_KINDS, OPT_IN_EVENT_KINDS, DaemonEvent
from muxd.protocol.fleet_messages import ListFleet
from muxd.protocol.messages import PaneInfo, ShowPane
from muxd.web.agents_grid import FleetEntry

# The events about one pane that change nothing but that pane's card (and the executions).
PANE_EVENT_KINDS = frozenset({"agent-state", "agent-waiting", "agent-idle", "agent-failed", "agent-limited",
                              "execution-finished", "pane-died", "pane-exited", "alert-activity", "alert-bell",
                              "alert-silence"})
# What a grid's feed subscribes to: every kind a reader of the agents hears, and the fleet's pulse.
GRID_EVENT_KINDS = [kind for kind in EVENT_KINDS if kind not in OPT_IN_EVENT_KINDS or kind in FLEET_EVENT_KINDS]


def panes_named(event: DaemonEvent) -> set[str] | None:
    """The panes an event asks to read again (none: the other hosts' alone); None: every pane."""
    if event.kind in FLEET_EVENT_KINDS:
        return set()
    return {event.pane_id} if event.kind in PANE_EVENT_KINDS and event.pane_id is not None else None


class BoardRead:
    """The board as last read through one connection (one token's view)."""

    def __init__(self) -> None:
        self.panes: dict[str, PaneInfo] = {}
        self.executions: dict[str, Execution] = {}
        self.read_once = False
        self.shared_database = True  # until the daemon says otherwise
        self.fleet: list[FleetEntry] = []

    async def read(self, client: Client, changed: set[str] | None = None,
                   ) -> tuple[list[PaneInfo], dict[str, Execution], list[FleetEntry]]:
        """The panes, their executions and the other hosts' panes, read again where `changed`
        says (None: everything)."""
        if changed is None or not self.read_once:
            panes, self.executions = await read_board(client, self.executions)
            self.panes = {pane.id: pane for pane in panes}
            self.read_once = True
        elif changed:
            for pane_id in sorted(changed):
                try:
                    self.panes[pane_id] = (await client.call(ShowPane, target=pane_id)).pane
                except NotFound:  # it closed
                    self.panes.pop(pane_id, None)
            self.executions = await read_executions(client, list(self.panes.values()), self.executions)
        if changed is None or self.shared_database:  # a database no other daemon shares: asked once
            fleet = await client.call(ListFleet)
            self.shared_database = fleet.shared
            self.fleet = [FleetEntry(pane=msgspec.structs.replace(p.pane, id=p.target), host=p.host, stale=p.stale)
                          for p in fleet.panes] if fleet.shared else []
        return list(self.panes.values()), self.executions, self.fleet
