"""Live state across hosts (issue 30): what a daemon on a shared PostgreSQL database knows of the
other daemons' panes, read from what each published (store/fleet.py). A pane of another host is
named `%N@host`, as its agent's principal is (`agent:%N@host`, store/hosts.py)."""

from __future__ import annotations

import re

import msgspec

from muxd.protocol.fields import Label
from muxd.protocol.pane_messages import AgentSummary, PaneInfo, _Message

# Another host's pane: %N@host, group 1 the pane, 2 the host (a host never holds '@': store/hosts.py).
HOST_TARGET = re.compile(r"(%\d+)@([A-Za-z0-9][A-Za-z0-9._-]*)")


def host_target(pane_id: str, host: str) -> str:
    """How pane `pane_id` of daemon `host` is named on the others: %N@host."""
    return f"{pane_id}@{host}"


class FleetHost(msgspec.Struct, frozen=True, kw_only=True):
    """Another daemon of the database, judged by its heartbeat on the database's clock."""

    host: str
    pid: int
    started_at: float         # its own clock
    last_heartbeat_at: float  # the database's clock, epoch seconds
    # No heartbeat for longer than the reader's bound: its panes' states are Unknown, never live.
    stale: bool
    stale_since: float | None = None  # when a daemon took it over (its running executions interrupted)


class FleetPane(msgspec.Struct, frozen=True, kw_only=True):
    """A pane of another host as its daemon last published it. On a stale host its agent's state
    (in `pane` and `summary`) is Unknown, the state last published kept in `last_state`."""

    host: str
    target: str             # %N@host
    pane: PaneInfo
    summary: AgentSummary   # duration_secs counted on to now (the database's clock) while live
    observed_at: float      # when its daemon built them (its clock)
    state_source: str | None = None  # where the state came from (screen, hook…): summary.sources["state"]
    published_s_ago: float = 0.0
    stale: bool = False
    last_state: str | None = None         # only when stale
    last_heartbeat_at: float | None = None  # only when stale


class ListFleet(_Message, tag="list-fleet"):
    """The other hosts' panes (only `host`'s when given); none on a database no daemon shares."""

    id: int
    host: Label | None = None


class FleetList(_Message, tag="fleet-list"):
    id: int
    host: str              # this daemon's own
    shared: bool           # on a database daemons share (PostgreSQL); False: nothing else to tell
    stale_after_s: float = 0.0
    hosts: list[FleetHost] = []
    panes: list[FleetPane] = []
    # The other hosts could not be read (the database's one line, as store_unavailable says it):
    # only this host's own panes are known now.
    unreadable: str | None = None
