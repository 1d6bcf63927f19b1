"""Other hosts' rows of the fleet tables (store/fleet.py) as the protocol's `FleetHost` and
`FleetPane`: a stale host's panes say Unknown, their last published state kept apart, so no
reader can take it for live."""

from __future__ import annotations

import msgspec

from muxd.protocol.fleet_messages import FleetHost, FleetPane, host_target
from muxd.protocol.pane_messages import AgentSummary, PaneInfo
from muxd.store.fleet import HostRow, PaneRow

UNKNOWN_STATE = "Unknown"
_pane_decoder = msgspec.json.Decoder(PaneInfo)
_summary_decoder = msgspec.json.Decoder(AgentSummary)


def fleet_host(row: HostRow) -> FleetHost:
    return FleetHost(host=row.host, pid=row.pid, started_at=row.started_at, last_heartbeat_at=row.beat_at,
                     stale=row.stale, stale_since=row.stale_since)


def fleet_pane(row: PaneRow, host: HostRow | None) -> FleetPane:
    """One published pane; `host`: its host's row (None, or stale: its state is Unknown)."""
    pane, summary = _pane_decoder.decode(row.pane), _summary_decoder.decode(row.summary)
    state = summary.sources.get("state")
    common = {"host": row.host, "target": host_target(row.pane_id, row.host), "observed_at": row.observed_at,
              "state_source": state.source if state is not None else None,
              "published_s_ago": round(max(0.0, row.age_s), 3)}
    if host is not None and not host.stale:
        duration = summary.activity.duration_secs
        if duration is not None:  # counted on since it was published, on the database's clock
            activity = msgspec.structs.replace(summary.activity, duration_secs=duration + int(max(0.0, row.age_s)))
            summary = msgspec.structs.replace(summary, activity=activity)
        return FleetPane(pane=pane, summary=summary, **common)  # type: ignore[arg-type]
    unknown = msgspec.structs.replace(summary.activity, state=UNKNOWN_STATE, duration_secs=None)
    summary = msgspec.structs.replace(summary, activity=unknown, confidence="stale")
    agent = msgspec.structs.replace(pane.agent, activity=msgspec.structs.replace(pane.agent.activity,
                                                                                 state=UNKNOWN_STATE))
    return FleetPane(pane=msgspec.structs.replace(pane, agent=agent), summary=summary, stale=True,
                     last_state=row.state, last_heartbeat_at=host.beat_at if host is not None else None,
                     **common)  # type: ignore[arg-type]


def fleet_view(hosts: list[HostRow], panes: list[PaneRow]) -> tuple[list[FleetHost], list[FleetPane]]:
    by_host = {row.host: row for row in hosts}
    return [fleet_host(row) for row in hosts], [fleet_pane(row, by_host.get(row.host)) for row in panes]
