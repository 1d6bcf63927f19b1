"""The engine tools of seed 004: `list_tools` (category, risk, search, input schemas),
`get_tool_metrics` and `get_tool_history` (both read the daemon, so they cover every MCP server
of this muxd)."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, get_args

import msgspec

from pydantic import Field

from muxd.config import AUDIT_HISTORY_LIMIT_DEFAULT, AUDIT_HISTORY_LIMIT_MAX
from muxd.mcp_server.engine_schemas import ListToolsOutput, ToolHistoryOutput, ToolMetricsOutput
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import RISKS, ToolRegistry
from muxd.protocol.messages import GetMetrics, GetToolHistory
from muxd.mcp_server.summary_tools import READ_ONLY
from muxd.mcp_server.tool_categories import CATEGORIES

Category = Literal["summary", "panes", "executions", "tasks", "engine"]
assert set(get_args(Category)) == set(CATEGORIES)  # one list: tool_categories.CATEGORIES

SEARCH_MAX_CHARS = 200
MOST_USED_TOOLS = 10


def register_engine_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="engine", risk="safe", annotations=READ_ONLY)
    async def list_tools(
        search: Annotated[str | None, Field(description="keep tools whose name or description contains this",
                                            max_length=SEARCH_MAX_CHARS)] = None,
        category: Annotated[Category | None, Field(description="keep one category")] = None,
        risk: Annotated[Literal["safe", "moderate", "dangerous"] | None,
                        Field(description="keep one risk level")] = None,
        include_schema: Annotated[bool, Field(description="add each tool's inputSchema")] = False,
    ) -> ListToolsOutput:
        """The tools this server serves, by category, with risk (safe / moderate / dangerous); filterable."""
        needle = (search or "").lower()
        found: list[dict[str, Any]] = []
        for s in sorted(tools.specs.values(), key=lambda s: (s.category, s.name)):
            if (needle and needle not in s.name.lower() and needle not in s.description.lower()) \
                    or (category is not None and s.category != category) or (risk is not None and s.risk != risk):
                continue
            entry: dict[str, Any] = {"name": s.name, "category": s.category, "risk": s.risk,
                                     "description": s.description}
            if include_schema:
                entry["inputSchema"] = tools.input_schemas[s.name]
            found.append(entry)
        categories: dict[str, int] = {}
        for entry in found:
            categories[entry["category"]] = categories.get(entry["category"], 0) + 1
        return {"tools": found, "total": len(found), "categories": categories,  # type: ignore[typeddict-item]
                "risks": list(RISKS)}

    @tools.tool(category="engine", risk="safe", annotations=READ_ONLY)
    async def get_tool_metrics(
        tool: Annotated[str | None, Field(description="one tool's metrics (default: every tool called so far)",
                                          min_length=1, max_length=SEARCH_MAX_CHARS)] = None,
        format: Annotated[Literal["json", "prometheus"],
                          Field(description="json counters, or Prometheus text exposition")] = "json",
    ) -> ToolMetricsOutput:
        """Calls, errors by code and a latency histogram per muxd tool, over every MCP server of this muxd
        since the daemon started."""
        reply = await current_client().call(GetMetrics, tool=tool)
        if format == "prometheus":
            return {"format": "prometheus", "text": reply.prometheus}
        per_tool: dict[str, Any] = reply.tools
        calls = sum(s["calls"] for s in per_tool.values())
        errors = sum(s["errors"] for s in per_tool.values())
        most_used = sorted(per_tool.items(), key=lambda kv: -kv[1]["calls"])[:MOST_USED_TOOLS]
        limits = tools.guard.limits
        return {
            "tools": per_tool,
            "total_calls": calls,
            "total_errors": errors,
            "success_rate": round((calls - errors) / calls, 4) if calls else None,
            "most_used_tools": [{"tool": name, "count": s["calls"]} for name, s in most_used],
            "limits": {"rate_per_s": limits.rate_per_s, "burst": limits.burst,
                       "call_timeout_s": limits.call_timeout_s, "response_max_bytes": limits.response_max_bytes},
            "timestamp": time.time(),
        }

    @tools.tool(category="engine", risk="safe", annotations=READ_ONLY)
    async def get_tool_history(
        tool: Annotated[str | None, Field(description="only calls of this tool", max_length=SEARCH_MAX_CHARS)] = None,
        principal: Annotated[str | None, Field(description="only calls by this principal (system, token:NAME, "
                                                           "agent:%N)", max_length=SEARCH_MAX_CHARS)] = None,
        status: Annotated[Literal["ok", "error", "denied", "rate_limited", "timeout"] | None,
                          Field(description="only calls that ended so")] = None,
        limit: Annotated[int, Field(description="newest rows to return", ge=1,
                                    le=AUDIT_HISTORY_LIMIT_MAX)] = AUDIT_HISTORY_LIMIT_DEFAULT,
    ) -> ToolHistoryOutput:
        """Recent audited tool calls, newest first (sha256 of the arguments, never the arguments). A
        pane's agent sees only its own calls."""
        reply = await current_client().call(GetToolHistory, tool=tool, principal=principal, status=status,
                                            limit=limit)
        rows = [msgspec.structs.asdict(row) for row in reply.rows]
        return {"calls": rows, "count": len(rows)}  # type: ignore[typeddict-item]
