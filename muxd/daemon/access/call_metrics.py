"""Per-tool call metrics kept in memory: calls, errors by code, a latency histogram.

The daemon keeps one `ToolMetrics` fed by every MCP server's recorded calls (`RecordCall`),
so `muxd metrics`, `get_tool_metrics` and `/metrics` show all of them together;
`prometheus_text` renders them in the Prometheus text format (seed 003's names, the latency in
seconds as Prometheus wants base units). A tool has its entry, at zero, from its registration
(`register`), so every tool is listed before its first call. Any principal may record calls
under any names, so the names (and each tool's error codes) are capped: past the cap they are
counted under OVERFLOW_KEY.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from muxd.config import LATENCY_BUCKETS_MS, METRICS_ERROR_CODES_MAX, METRICS_TOOLS_MAX
from muxd.prometheus import Exposition, Histogram

OVERFLOW_KEY = "(other)"  # not an identifier: no tool and no error code has it
MS_PER_S = 1000.0


@dataclass
class ToolStats:
    """One tool's counters; the latency histogram is kept in milliseconds (LATENCY_BUCKETS_MS)."""

    calls: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    latency_ms: Histogram = field(default_factory=lambda: Histogram(LATENCY_BUCKETS_MS))
    last_called_at: float | None = None

    def as_dict(self) -> dict[str, Any]:
        bounds = [*map(str, LATENCY_BUCKETS_MS), "+Inf"]
        failed = sum(self.errors.values())
        return {
            "calls": self.calls,
            "successes": self.calls - failed,
            "errors": failed,
            "errors_by_code": dict(sorted(self.errors.items())),
            "average_latency_ms": round(self.latency_ms.total / self.calls, 3) if self.calls else 0.0,
            "latency_ms_buckets": dict(zip(bounds, self.latency_ms.cumulative())),
            "last_called_at": self.last_called_at,
        }


class ToolMetrics:
    """Calls, errors and latencies per tool name."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolStats] = {}

    def register(self, tool: str) -> bool:
        """`tool` exists: its entry is there, at zero, before any call. True if it is new here
        (False when it was known, or past the cap of names)."""
        if tool in self._tools or len(self._tools) >= METRICS_TOOLS_MAX:
            return False
        self._tools[tool] = ToolStats()
        return True

    def record(self, tool: str, latency_ms: float, error_code: str | None = None) -> None:
        stats = self._tools.get(tool)
        if stats is None:
            if len(self._tools) >= METRICS_TOOLS_MAX:
                tool = OVERFLOW_KEY
            stats = self._tools.setdefault(tool, ToolStats())
        stats.calls += 1
        if error_code is not None:
            if error_code not in stats.errors and len(stats.errors) >= METRICS_ERROR_CODES_MAX:
                error_code = OVERFLOW_KEY
            stats.errors[error_code] = stats.errors.get(error_code, 0) + 1
        stats.latency_ms.observe(latency_ms)
        stats.last_called_at = time.time()

    def snapshot(self, tool: str | None = None) -> dict[str, dict[str, Any]]:
        """{tool: counters} for every tool registered or called so far (or just `tool`)."""
        names = sorted(self._tools) if tool is None else [tool] if tool in self._tools else []
        return {name: self._tools[name].as_dict() for name in names}

    def write(self, out: Exposition) -> None:
        """mcp_calls_total, mcp_errors_total and the mcp_latency_seconds histogram, per tool."""
        tools = sorted(self._tools.items())
        out.counter("mcp_calls_total", "MCP tool calls.", [((("tool", t),), s.calls) for t, s in tools])
        out.counter("mcp_errors_total", "MCP tool calls that failed, by error code.",
                    [((("tool", t), ("code", code)), n) for t, s in tools for code, n in sorted(s.errors.items())])
        out.histogram("mcp_latency_seconds", "MCP tool call latency in seconds.",
                      {(("tool", t),): s.latency_ms for t, s in tools}, scale=1 / MS_PER_S)


def prometheus_text(metrics: ToolMetrics) -> str:
    """The metrics as Prometheus text exposition: mcp_calls_total, mcp_errors_total, mcp_latency_seconds."""
    out = Exposition()
    metrics.write(out)
    return out.text()
