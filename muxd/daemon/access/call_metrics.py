"""Per-tool call metrics kept in memory: calls, errors by code, a latency histogram.

The daemon keeps one `ToolMetrics` fed by every MCP server's recorded calls (`RecordCall`),
so `muxd metrics`, `get_tool_metrics` and `/metrics` show all of them together;
`prometheus_text` renders them in the Prometheus text format (seed 003's names). Any principal
may record calls under any names, so the names (and each tool's error codes) are capped: past
the cap they are counted under OVERFLOW_KEY.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Any

from muxd.config import LATENCY_BUCKETS_MS, METRICS_ERROR_CODES_MAX, METRICS_TOOLS_MAX

OVERFLOW_KEY = "(other)"  # not an identifier: no tool and no error code has it


@dataclass
class ToolStats:
    """One tool's counters; `buckets[i]` counts calls with latency <= LATENCY_BUCKETS_MS[i] (not cumulative)."""

    calls: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    latency_ms_sum: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS_MS) + 1))
    last_called_at: float | None = None

    def as_dict(self) -> dict[str, Any]:
        cumulative, running = {}, 0
        for bound, count in zip([*map(str, LATENCY_BUCKETS_MS), "+Inf"], self.buckets):
            running += count
            cumulative[bound] = running
        failed = sum(self.errors.values())
        return {
            "calls": self.calls,
            "successes": self.calls - failed,
            "errors": failed,
            "errors_by_code": dict(sorted(self.errors.items())),
            "average_latency_ms": round(self.latency_ms_sum / self.calls, 3) if self.calls else 0.0,
            "latency_ms_buckets": cumulative,
            "last_called_at": self.last_called_at,
        }


class ToolMetrics:
    """Calls, errors and latencies per tool name."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolStats] = {}

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
        stats.latency_ms_sum += latency_ms
        stats.buckets[bisect.bisect_left(LATENCY_BUCKETS_MS, latency_ms)] += 1
        stats.last_called_at = time.time()

    def snapshot(self, tool: str | None = None) -> dict[str, dict[str, Any]]:
        """{tool: counters} for every tool called so far (or just `tool`)."""
        names = sorted(self._tools) if tool is None else [tool] if tool in self._tools else []
        return {name: self._tools[name].as_dict() for name in names}


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(metrics: ToolMetrics) -> str:
    """The metrics as Prometheus text exposition: mcp_calls_total, mcp_errors_total, mcp_latency_ms."""
    out = ["# HELP mcp_calls_total MCP tool calls.", "# TYPE mcp_calls_total counter"]
    snapshot = metrics.snapshot()
    for tool, stats in snapshot.items():
        out.append(f'mcp_calls_total{{tool="{_label(tool)}"}} {stats["calls"]}')
    out += ["# HELP mcp_errors_total MCP tool calls that failed, by error code.", "# TYPE mcp_errors_total counter"]
    for tool, stats in snapshot.items():
        for code, count in stats["errors_by_code"].items():
            out.append(f'mcp_errors_total{{tool="{_label(tool)}",code="{_label(code)}"}} {count}')
    out += ["# HELP mcp_latency_ms MCP tool call latency in milliseconds.", "# TYPE mcp_latency_ms histogram"]
    for tool, stats in snapshot.items():
        name = _label(tool)
        for bound, count in stats["latency_ms_buckets"].items():
            out.append(f'mcp_latency_ms_bucket{{tool="{name}",le="{bound}"}} {count}')
        out.append(f'mcp_latency_ms_sum{{tool="{name}"}} {stats["average_latency_ms"] * stats["calls"]:.3f}')
        out.append(f'mcp_latency_ms_count{{tool="{name}"}} {stats["calls"]}')
    return "\n".join(out) + "\n"
