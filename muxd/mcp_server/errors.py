"""muxd errors become MCP tool errors at this boundary, keeping the stable code in the text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from muxd.errors import BadRequest, MuxdError

P = ParamSpec("P")
T = TypeVar("T")


def tool_error(exc: MuxdError) -> ToolError:
    """A ToolError whose message starts with the muxd code: "not_found: can't find pane: %9"."""
    return ToolError(f"{exc.code}: {exc.message}")


def maps_muxd_errors(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Wrap a tool body so a MuxdError reaches the MCP client as a ToolError with its code."""

    @wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except MuxdError as exc:
            raise tool_error(exc) from exc

    return wrapper


def check_range(field: str, value: int, low: int, high: int) -> int:
    """`value` when low <= value <= high, else a bad_request naming the field and its bounds."""
    if not low <= value <= high:
        raise BadRequest(f"{field} must be between {low} and {high}, got {value}", field=field)
    return value
