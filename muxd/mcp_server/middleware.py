"""What every MCP request passes through before and after muxd's tools (SDK ServerMiddleware).

- `acting_as_caller`: over HTTP, run the request through the daemon connection of the bearer
  token that authenticated it (stdio has one connection, set as the default in link.py).
- `tidy_tool_results`: a structured tool result's text block becomes compact JSON (the SDK
  pretty-prints it; the text is what a model reads, so indentation is paid in tokens), and an
  argument the SDK's schema validation rejected reads as muxd's `bad_request: field: why` (a
  tool result with isError, which the model can correct); an unknown tool is a protocol
  error, JSON-RPC -32602 `not_found: …`, as the MCP spec says (the SDK answered it as a tool
  result). Both are rate-limited, measured and audited here (every unknown name as one), since
  such calls never reach muxd's guard. An error's text starts with its stable code, as the
  README promises: the SDK's "Error executing tool X: " before it is dropped.
  Every result carries the caller's remaining rate budget in `_meta` (`muxd/rate_limit`,
  filled by the guard).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic_core import to_json

from muxd.client.connection import Client
from muxd.errors import BadRequest, ConnectionLost, MuxdError, NotFound
from muxd.mcp_server.errors import tool_error
from muxd.mcp_server.guards import RATE_LIMIT_META_KEY, UNKNOWN_TOOL_KEY, ToolGuard, budget_of_call
from muxd.mcp_server.link import acting_as

TOOLS_CALL = "tools/call"
# "1 validation error for read_paneArguments\nlines\n  Input should be ... [type=int_parsing, ...]"
_VALIDATION_HEAD = re.compile(r"(\d+) validation errors? for (\w+)Arguments\n")
_ERROR_DETAIL = re.compile(r"\s*\[type=.*$")


def bad_request_text(message: str) -> str | None:
    """The SDK's pydantic validation message as "bad_request: field: why; …", or None if it is not one."""
    head = _VALIDATION_HEAD.search(message)
    if head is None:
        return None
    prefix = message[:head.start()]
    lines = message[head.end():].split("\n")
    problems: list[str] = []
    for field, why in zip(lines[0::2], lines[1::2]):  # pairs of "field" / "  why [type=…]"
        if not field or field.startswith(" "):
            break
        problems.append(f"{field}: {_ERROR_DETAIL.sub('', why.strip())}")
    if not problems:
        return None
    return f"{prefix}bad_request: {'; '.join(problems)}"


# The SDK's own answer for a name it has no tool of (a tool's error always has _SDK_TOOL_ERROR first).
_UNKNOWN_TOOL = re.compile(r"Unknown tool: (.*)", re.S)
# The SDK's words before the text of a tool that raised.
_SDK_TOOL_ERROR = re.compile(r"Error executing tool [^:\s]*: ")


def unknown_tool_text(name: str) -> str:
    return f"{NotFound.code}: no tool named {name!r} (tools/list lists them)"


def _tidy(result: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The result to send, and the error code when the SDK refused the arguments itself."""
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1 or content[0].get("type") != "text":
        return result, None
    refused: str | None = None
    if result.get("isError"):
        text = str(content[0].get("text", ""))
        prefix = _SDK_TOOL_ERROR.match(text)
        text = text[prefix.end():] if prefix else text
        bad_request = bad_request_text(text)
        if bad_request is not None:
            refused, text = BadRequest.code, bad_request
    elif "structuredContent" in result:
        # pydantic-core's encoder: the same compact UTF-8 text as json.dumps, about 3x faster on a page of rows.
        text = to_json(result["structuredContent"]).decode()
    else:
        return result, None
    return {**result, "content": [{**content[0], "text": text}]}, refused


def _unknown_tool(result: dict[str, Any]) -> str | None:
    """The name the SDK found no tool for, when `result` is its answer saying so."""
    content = result.get("content")
    if not result.get("isError") or not isinstance(content, list) or len(content) != 1:
        return None
    unknown = _UNKNOWN_TOOL.fullmatch(str(content[0].get("text", "")))
    return unknown.group(1) if unknown is not None else None


def tidy_tool_results(guard: ToolGuard) -> Callable[[ServerRequestContext[Any, Any], CallNext], Any]:
    """The middleware tidying tool results; calls the SDK refused are accounted for by `guard`."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        started = time.monotonic()
        if ctx.method != TOOLS_CALL:
            return await call_next(ctx)
        params = ctx.params or {}
        with budget_of_call() as budget:
            result = await call_next(ctx)
            if not isinstance(result, dict):
                return result
            unknown = _unknown_tool(result)
            if unknown is not None:  # muxd's guard never saw this call: a protocol error, accounted here
                limited = await guard.refused(UNKNOWN_TOOL_KEY, params.get("arguments"), NotFound.code,
                                              (time.monotonic() - started) * 1000.0)
                text = str(tool_error(limited)) if limited is not None else unknown_tool_text(unknown)
                raise MCPError(code=INVALID_PARAMS, message=text, data={"name": unknown})
            tidied, refused = _tidy(result)
            if refused is not None:  # arguments the SDK refused: muxd's guard never saw this call
                limited = await guard.refused(str(params.get("name") or ""), params.get("arguments"), refused,
                                              (time.monotonic() - started) * 1000.0)
                if limited is not None:
                    tidied = {**tidied, "content": [{**tidied["content"][0], "text": str(tool_error(limited))}]}
        if budget:  # what the caller may still spend, in every result (seed 004's rate-limit headers)
            tidied = {**tidied, "_meta": {**(tidied.get("_meta") or {}), RATE_LIMIT_META_KEY: dict(budget)}}
        return tidied

    return middleware


def _lost_connection(result: HandlerResult) -> bool:
    if not isinstance(result, dict) or not result.get("isError"):
        return False
    content = result.get("content") or [{}]
    return f"{ConnectionLost.code}:" in str(content[0].get("text", ""))


def acting_as_caller(forget: Callable[[Client], None] | None = None
                     ) -> Callable[[ServerRequestContext[Any, Any], CallNext], Any]:
    """Middleware running each request as the principal of its bearer token (see http_auth.py).

    `forget(client)` is told when a call found that token's daemon connection lost, so the
    next request opens a new one.
    """

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        request = ctx.request
        user = request.scope.get("user") if request is not None and hasattr(request, "scope") else None
        client = getattr(getattr(user, "access_token", None), "daemon_client", None)
        if client is None:
            if ctx.method == TOOLS_CALL:
                # The bearer middleware lets no unauthenticated request this far; never fall back
                # to a connection of higher privilege.
                raise MuxdError("this request carries no authenticated muxd token")
            return await call_next(ctx)
        with acting_as(client):
            result = await call_next(ctx)
        if forget is not None and _lost_connection(result):
            forget(client)
        return result

    return middleware
