"""The summary tools of seed 002: `agent_summary` for one pane, `list_agents` for the fleet."""

from __future__ import annotations

import time
from typing import Annotated, Any

import msgspec
from mcp_types import ToolAnnotations
from pydantic import Field

from muxd.mcp_server.errors import check_range
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.schemas import AgentSummaryOutput, ListAgentsOutput
from muxd.protocol.messages import AgentSummary, ListPanes, PaneInfo, Summary
from muxd.units import duration, limit_text, tokens

SUMMARY_OUTPUT_LINES_DEFAULT = 10
SUMMARY_OUTPUT_LINES_MAX = 50  # seed 002's bound

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

PaneId = Annotated[str, Field(description="the pane: `%N` or its name", min_length=1, max_length=200)]


def summary_record(summary: AgentSummary) -> dict[str, Any]:
    """A pane's summary as a wait's result carries it: without its recent output."""
    record: dict[str, Any] = msgspec.to_builtins(summary)
    record.pop("recent_output", None)
    return record


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
        output_lines: Annotated[int, Field(
            description=f"how many lines of recent output (1-{SUMMARY_OUTPUT_LINES_MAX})",
            json_schema_extra={"minimum": 1, "maximum": SUMMARY_OUTPUT_LINES_MAX})] = SUMMARY_OUTPUT_LINES_DEFAULT,
    ) -> AgentSummaryOutput:
        """What the agent in one pane is doing, in ~80 tokens. Use it instead of read_pane to check on an agent."""
        # Bounds are checked here, not by pydantic, so the error carries muxd's bad_request code.
        check_range("output_lines", output_lines, 1, SUMMARY_OUTPUT_LINES_MAX)
        reply = await current_client().call(Summary, target=pane_id, include_recent_output=include_recent_output,
                                  output_lines=output_lines)
        summary: dict[str, Any] = msgspec.to_builtins(reply.summary)
        if not include_recent_output:
            summary.pop("recent_output", None)
        elif summary.get("recent_output") is None:
            summary["recent_output"] = []  # asked for, none kept: [] rather than null (seed 002)
        return summary  # type: ignore[return-value]

    @tools.tool(category="summary", risk="safe", annotations=READ_ONLY)
    async def list_agents() -> ListAgentsOutput:
        """The fleet at a glance: one line per pane (id name agent state duration 'doing' tokens)."""
        panes = (await current_client().call(ListPanes, all=True)).panes
        now = time.time()
        return {"agents": [agent_line(p, now) for p in panes]}
