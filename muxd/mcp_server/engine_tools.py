"""The engine tools of seed 004: `list_tools` (category, risk, search), `get_tool_metrics` and
`get_tool_history` (both read the daemon, so they cover every MCP server of this muxd)."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

import msgspec

from pydantic import Field

from muxd.config import AUDIT_HISTORY_LIMIT_DEFAULT, AUDIT_HISTORY_LIMIT_MAX
from muxd.errors import BadRequest
from muxd.mcp_server.errors import check_range
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import RISKS, ToolRegistry
from muxd.protocol.messages import GetMetrics, GetToolHistory
from muxd.mcp_server.summary_tools import READ_ONLY

SEARCH_MAX_CHARS = 200
MOST_USED_TOOLS = 10


def register_engine_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="engine", risk="safe", annotations=READ_ONLY)
    async def list_tools(
        search: Annotated[str | None, Field(description="keep tools whose name or description contains this",
                                            max_length=SEARCH_MAX_CHARS)] = None,
        category: Annotated[str | None, Field(description="keep one category: panes, summary, executions, engine")] = None,
        risk: Annotated[Literal["safe", "moderate", "dangerous"] | None,
                        Field(description="keep one risk level")] = None,
    ) -> dict[str, Any]:
        """Every muxd tool with its category and risk (safe / moderate / dangerous); filterable."""
        if search is not None and len(search) > SEARCH_MAX_CHARS:
            raise BadRequest(f"search has more than {SEARCH_MAX_CHARS} characters", field="search")
        needle = (search or "").lower()
        found = [
            {"name": s.name, "category": s.category, "risk": s.risk, "description": s.description}
            for s in sorted(tools.specs.values(), key=lambda s: (s.category, s.name))
            if (not needle or needle in s.name.lower() or needle in s.description.lower())
            and (category is None or s.category == category) and (risk is None or s.risk == risk)
        ]
        categories: dict[str, int] = {}
        for entry in found:
            categories[entry["category"]] = categories.get(entry["category"], 0) + 1
        return {"tools": found, "total": len(found), "categories": categories, "risks": list(RISKS)}

    @tools.tool(category="engine", risk="safe", annotations=READ_ONLY)
    async def get_tool_metrics(
        tool: Annotated[str | None, Field(description="one tool's metrics (default: every tool called so far)",
                                          max_length=SEARCH_MAX_CHARS)] = None,
        format: Annotated[Literal["json", "prometheus"],
                          Field(description="json counters, or Prometheus text exposition")] = "json",
    ) -> dict[str, Any]:
        """Calls, errors by code and a latency histogram per muxd tool, over every MCP server of this muxd
        since the daemon started."""
        if tool is not None:
            check_range("tool", len(tool), 1, SEARCH_MAX_CHARS)
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
    ) -> dict[str, Any]:
        """Recent audited tool calls, newest first: tool, principal, sha256 of the arguments (never
        the arguments), status, error code, rows, latency. A pane's agent sees only its own calls."""
        check_range("limit", limit, 1, AUDIT_HISTORY_LIMIT_MAX)
        reply = await current_client().call(GetToolHistory, tool=tool, principal=principal, status=status,
                                            limit=limit)
        rows = [msgspec.structs.asdict(row) for row in reply.rows]
        return {"calls": rows, "count": len(rows)}
