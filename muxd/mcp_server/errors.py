"""muxd errors become MCP tool errors at this boundary, keeping the stable code in the text."""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from muxd.errors import BadRequest, MuxdError, RateLimited  # noqa: F401 - RateLimited: tools raise it from here too


def tool_error(exc: MuxdError) -> ToolError:
    """A ToolError whose message starts with the muxd code: "not_found: can't find pane: %9"."""
    return ToolError(f"{exc.code}: {exc.message}")


def check_range(field: str, value: float, low: float, high: float) -> float:
    """`value` when low <= value <= high, else a bad_request naming the field and its bounds."""
    if not low <= value <= high:
        raise BadRequest(f"{field} must be between {low} and {high}, got {value}", field=field)
    return value
