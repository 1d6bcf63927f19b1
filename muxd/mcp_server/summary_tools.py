"""The summary tools of seed 002: `agent_summary` for one pane, `list_agents` for the fleet."""

from __future__ import annotations

import time
from typing import Annotated, Any

import msgspec
from mcp_types import ToolAnnotations
from pydantic import Field

from muxd.config import HOST_NAME_MAX_CHARS
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.schemas import AgentSummaryOutput, ListAgentsOutput
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
        when not `screen` (certain: hooks agree, hook, stale)."""
        reply = await current_client().call(Summary, target=pane_id, include_recent_output=include_recent_output,
                                            output_lines=output_lines)
        return lean_summary(reply.summary, recent_output=include_recent_output)  # type: ignore[return-value]

    @tools.tool(category="summary", risk="safe", annotations=READ_ONLY)
    async def list_agents() -> ListAgentsOutput:
        """The fleet at a glance: one line per pane (id name agent state duration 'doing' tokens)."""
        panes = (await current_client().call(ListPanes, all=True)).panes
        now = time.time()
        return {"agents": [agent_line(p, now) for p in panes]}
