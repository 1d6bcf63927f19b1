"""`list-fleet`: the other hosts of a shared database and their panes, as each last published them
(daemon/work/fleet_presence.py); on a database no daemon shares, nothing but this host. When the
database cannot be read, its line in `unreadable`: the callers still show this host's own panes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.errors import StoreUnavailable
from muxd.protocol.fleet_messages import FleetList, ListFleet

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


@command(ListFleet)
async def list_fleet(daemon: Daemon, req: ListFleet) -> FleetList:
    presence, host = daemon.fleet, daemon.access.db.host
    if presence is None:
        return FleetList(id=req.id, host=host, shared=False)
    try:
        hosts, panes = await presence.others(req.host)
    except StoreUnavailable as exc:
        return FleetList(id=req.id, host=host, shared=True, stale_after_s=presence.stale_after_s,
                         unreadable=exc.message)
    return FleetList(id=req.id, host=host, shared=True, stale_after_s=presence.stale_after_s, hosts=hosts,
                     panes=panes)
