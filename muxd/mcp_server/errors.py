"""muxd errors become MCP tool errors at this boundary, keeping the stable code in the text."""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from muxd.errors import MuxdError, RateLimited  # noqa: F401 - RateLimited: tools raise it from here too


def tool_error(exc: MuxdError) -> ToolError:
    """A ToolError whose message starts with the muxd code: "not_found: can't find pane: %9"."""
    return ToolError(f"{exc.code}: {exc.message}")
