"""Per-tool call metrics: one implementation, in the daemon (`muxd/daemon/call_metrics.py`).

An MCP server keeps its own copy only as a fallback view of its own calls; the figures every
client sees (`get_tool_metrics`, `muxd metrics`, `/metrics`) come from the daemon.
"""

from __future__ import annotations

from muxd.daemon.call_metrics import ToolMetrics, ToolStats, prometheus_text

__all__ = ["ToolMetrics", "ToolStats", "prometheus_text"]
