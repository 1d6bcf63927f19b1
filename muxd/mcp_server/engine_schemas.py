"""The output shapes of the engine tools (seed 004): list_tools, get_tool_metrics, get_tool_history."""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict


class ToolEntryOutput(TypedDict):
    name: str
    category: str
    risk: str
    description: str
    inputSchema: NotRequired[dict[str, Any]]  # with include_schema=true: as tools/list publishes it


class ListToolsOutput(TypedDict):
    tools: list[ToolEntryOutput]
    total: int
    categories: dict[str, int]  # category -> tools listed in it
    risks: list[str]


class MostUsedOutput(TypedDict):
    tool: str
    count: int


class ToolMetricsOutput(TypedDict):
    """json: counters per tool (call_metrics.py's shape) and totals; prometheus: the exposition text."""

    format: NotRequired[str]
    text: NotRequired[str]
    tools: NotRequired[dict[str, dict[str, Any]]]
    total_calls: NotRequired[int]
    total_errors: NotRequired[int]
    success_rate: NotRequired[float | None]
    most_used_tools: NotRequired[list[MostUsedOutput]]
    limits: NotRequired[dict[str, float]]
    timestamp: NotRequired[float]


class ToolCallOutput(TypedDict):
    ts: float
    principal: str
    kind: str
    tool: str
    args_sha256: str
    status: str
    error_code: str | None
    rows: int
    latency_ms: float


class ToolHistoryOutput(TypedDict):
    calls: list[ToolCallOutput]
    count: int
