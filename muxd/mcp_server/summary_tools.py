"""The summary tools of seed 002: `agent_summary` for one pane, `list_agents` for the fleet.

On a database other daemons share (PostgreSQL, issue 30) both answer for their panes too, as
each daemon last published them (daemon/work/fleet_presence.py): another host's pane is
`%N@host`, and a stale host's agents say Unknown, never their last state as if live."""

from __future__ import annotations

import time
from typing import Annotated, Any

import msgspec
from mcp_types import ToolAnnotations
from pydantic import Field

from muxd.config import HOST_NAME_MAX_CHARS
from muxd.errors import NotFound, StoreUnavailable
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.schemas import AgentSummaryOutput, FleetHostOutput, ListAgentsOutput
from muxd.protocol.fleet_messages import HOST_TARGET, FleetList, FleetPane, ListFleet
from muxd.protocol.messages import AgentSummary, ListPanes, PaneInfo, Summary
from muxd.units import duration, limit_text, tokens

SUMMARY_OUTPUT_LINES_DEFAULT = 10
SUMMARY_OUTPUT_LINES_MAX = 50  # seed 002's bound

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

PaneId = Annotated[str, Field(description="`%N` or the pane's name", min_length=1, max_length=200)]
# send_task, dispatch_tasks: also another host's pane, through the database daemons share (issue 30).
AnyHostPaneId = Annotated[str, Field(description="`%N`, the pane's name, or `%N@host`: pane %N of another host's "
                                                 "daemon on the database they share", min_length=1, max_length=200)]
# Daemons sharing one database (issue 30) each record their host: a read may ask for one host's rows.
HostFilter = Annotated[str | None, Field(description="only one daemon's host (its MUXD_HOST); omit for every host",
                                         min_length=1, max_length=HOST_NAME_MAX_CHARS)]


# muxd's fields beyond seed 002's own, left out while they have nothing to say (seed 002's own
# fields are always there, null or [] when unknown): a summary stays near seed 002's ~80 tokens.
# The CLI's `muxd summary --json` shows every field.
_QUIET_WHEN_NULL = ("confirmation", "error", "limit")
_QUIET_ACTIVITY_WHEN_NULL = ("tool", "tool_input")


def lean_summary(summary: AgentSummary, *, recent_output: bool = False) -> dict[str, Any]:
    """A pane's summary as MCP shows it (AgentSummaryOutput); its recent output only if asked."""
    record: dict[str, Any] = msgspec.to_builtins(summary)
    for key in _QUIET_WHEN_NULL:
        if record.get(key) is None:
            record.pop(key, None)
    for key in _QUIET_ACTIVITY_WHEN_NULL:
        if record["activity"].get(key) is None:
            record["activity"].pop(key, None)
    confidence = record.get("confidence")
    if confidence in ("screen", "hook") and record.get("sources"):
        # Every field from the one source `confidence` names: the sources would only repeat it (and
        # the state's time is in duration_secs). Fields from elsewhere (a session log) are kept.
        record["sources"] = {field: where for field, where in record["sources"].items()
                             if where.get("source") != confidence}
    for key in ("background", "sources"):
        if not record.get(key):
            record.pop(key, None)
    if confidence == "screen":
        del record["confidence"]  # read off the screen, as a summary is unless it says otherwise
    if not recent_output:
        record.pop("recent_output", None)
    elif record.get("recent_output") is None:
        record["recent_output"] = []  # asked for, none kept: [] rather than null (seed 002)
    return record


def summary_record(summary: AgentSummary) -> dict[str, Any]:
    """A pane's summary as a wait's result carries it: without its recent output."""
    return lean_summary(summary)


def agent_line(pane: PaneInfo, now: float) -> str:
    """One compact line for a pane: id, name, agent type, state, duration, description, tokens,
    and what it waits on (a confirmation, a usage limit's reset)."""
    agent = pane.agent
    parts = [pane.id, pane.name or "-", agent.agent_type or "none", agent.activity.state]
    if agent.activity.since is not None:
        parts.append(duration(now - agent.activity.since))
    if agent.activity.description:
        parts.append(repr(agent.activity.description))
    if agent.session.tokens_used is not None:
        parts.append(f"{tokens(agent.session.tokens_used)} tok")
    if agent.is_awaiting_confirmation:
        parts.append("AWAITING CONFIRMATION")
    if agent.limit is not None:
        parts.append(limit_text(agent.limit.resets_at, now).replace("usage limit", "USAGE LIMIT", 1))
    return " ".join(parts)


async def other_hosts(host: str | None = None) -> FleetList | None:
    """The other daemons of a shared database and their panes (only `host`'s; none for a
    pane-scoped token: they are in no pane's scope); None on a database none shares."""
    fleet = await current_client().call(ListFleet, host=host)
    return fleet if fleet.shared else None


def fleet_summary(entry: FleetPane, *, recent_output: bool = False) -> dict[str, Any]:
    """Another host's pane as agent_summary shows it: its host, when its daemon saw it and the
    state's source; when stale, the last state apart and the host's last heartbeat."""
    record = lean_summary(entry.summary, recent_output=recent_output)  # no output crosses hosts: []
    record.update(pane_id=entry.target, host=entry.host, stale=entry.stale, observed_at=entry.observed_at,
                  state_source=entry.state_source)
    if entry.stale:
        record.update(last_state=entry.last_state, last_heartbeat_at=entry.last_heartbeat_at)
    return record


def fleet_line(entry: FleetPane, now: float) -> str:
    """list_agents' line for another host's pane; a stale one says only what is known."""
    if not entry.stale:
        return agent_line(msgspec.structs.replace(entry.pane, id=entry.target), now)
    pane = entry.pane
    heard = "" if entry.last_heartbeat_at is None else f", heartbeat {duration(now - entry.last_heartbeat_at)} ago"
    return (f"{entry.target} {pane.name or '-'} {pane.agent.agent_type or 'none'} Unknown "
            f"(host {entry.host} stale{heard}; last {entry.last_state})")


def fleet_hosts(fleet: FleetList) -> list[FleetHostOutput]:
    return [{"host": h.host, "stale": h.stale, "last_heartbeat_at": h.last_heartbeat_at,
             "panes": sum(p.host == h.host for p in fleet.panes)} for h in fleet.hosts]


def register_summary_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="summary", risk="safe", annotations=READ_ONLY)
    async def agent_summary(
        pane_id: PaneId,
        include_recent_output: Annotated[bool, Field(description="add the last lines of output")] = False,
        output_lines: Annotated[int, Field(description="lines of recent output", ge=1,
                                           le=SUMMARY_OUTPUT_LINES_MAX)] = SUMMARY_OUTPUT_LINES_DEFAULT,
    ) -> AgentSummaryOutput:
        """What the agent in a pane is doing, in ~80 tokens: check agents with this, not read_pane.
        confirmation, error, limit, background, sources: only when there is one; confidence only
        when not `screen` (certain: hooks agree, hook, stale). Another host's pane: `%N@host`
        (host, observed_at, state_source; when stale: state Unknown, last_state, last_heartbeat_at)."""
        if (named := HOST_TARGET.fullmatch(pane_id)) is not None:
            fleet = await other_hosts(named[2])
            if fleet is not None and fleet.host == named[2]:
                pane_id = named[1]  # this host's own
            elif fleet is not None:
                if fleet.unreadable is not None:
                    raise StoreUnavailable(fleet.unreadable, pane=pane_id)
                entry = next((p for p in fleet.panes if p.target == pane_id), None)
                if entry is None:
                    raise NotFound(f"no pane {pane_id}: host {named[2]} published none such", pane=pane_id)
                return fleet_summary(entry, recent_output=include_recent_output)  # type: ignore[return-value]
        reply = await current_client().call(Summary, target=pane_id, include_recent_output=include_recent_output,
                                            output_lines=output_lines)
        return lean_summary(reply.summary, recent_output=include_recent_output)  # type: ignore[return-value]

    @tools.tool(category="summary", risk="safe", annotations=READ_ONLY)
    async def list_agents() -> ListAgentsOutput:
        """The fleet at a glance: one line per pane (id name agent state duration 'doing' tokens);
        other hosts' panes as `%N@host`, a stale host's state Unknown (hosts: each one's heartbeat;
        hosts_unreadable: why none is shown, when the shared database cannot be read)."""
        panes = (await current_client().call(ListPanes, all=True)).panes
        now = time.time()
        fleet = await other_hosts()
        if fleet is None:
            return {"agents": [agent_line(p, now) for p in panes]}
        listed: ListAgentsOutput = {"agents": [agent_line(p, now) for p in panes]
                                    + [fleet_line(p, now) for p in fleet.panes], "hosts": fleet_hosts(fleet)}
        if fleet.unreadable is not None:  # this host's own, and a line saying why no others
            listed["hosts_unreadable"] = f"store_unavailable: {fleet.unreadable}"
        return listed
