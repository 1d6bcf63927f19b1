"""The MCP server object: the SDK's MCPServer with muxd's guarded tools.

Tools reach the daemon through `link.current_client()`: over stdio the one connection
daemon_link.py opens when first needed, over HTTP the connection of each request's bearer token
(see http_server.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerMiddleware
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, GetPromptRequestParams

from muxd import __version__
from muxd.client.connection import Client
from muxd.mcp_server.engine_tools import register_engine_tools
from muxd.mcp_server.event_resources import register_event_resources
from muxd.mcp_server.event_streams import register_event_streams
from muxd.mcp_server.execution_tools import register_execution_tools
from muxd.mcp_server.guards import ToolGuard
from muxd.mcp_server.identity import INSTRUCTIONS, SERVER_NAME
from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.link import set_default_client
from muxd.mcp_server.middleware import tidy_tool_results
from muxd.mcp_server.pane_tools import register_pane_tools
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.summary_tools import register_summary_tools
from muxd.mcp_server.task_history_tools import register_task_history_tools
from muxd.mcp_server.task_tools import register_task_tools
from muxd.mcp_server.wait_tools import register_wait_tools


def build_registry(client: Client | None, limits: GuardLimits | None = None, *,
                   auth: AuthSettings | None = None, token_verifier: TokenVerifier | None = None,
                   middleware: Sequence[ServerMiddleware[Any]] = (),
                   categories: Iterable[str] | None = None) -> ToolRegistry:
    """Every muxd tool (or those of `categories`), guarded, on a new MCPServer; limits default to
    the environment's.

    `client` becomes the default daemon connection (stdio); None leaves none, so a call that
    is not run `acting_as` some connection fails instead of borrowing a stronger one (HTTP).
    """
    guard = ToolGuard(limits or GuardLimits.from_env())
    server: MCPServer[Any] = MCPServer(name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
                                       auth=auth, token_verifier=token_verifier,
                                       middleware=[*middleware, tidy_tool_results(guard)], log_level="WARNING")
    tools = ToolRegistry(server, guard, categories)
    set_default_client(client)
    register_summary_tools(tools)
    register_pane_tools(tools)
    register_wait_tools(tools)
    register_engine_tools(tools)
    register_execution_tools(tools)
    register_task_history_tools(tools)
    register_task_tools(tools)
    register_event_resources(tools)
    register_event_streams(tools)
    serve_no_prompts(server)
    return tools


def serve_no_prompts(server: MCPServer[Any]) -> None:
    """Advertise no prompts capability, and answer a prompts/get with -32602 `not_found`.

    muxd has no prompts; the SDK serves prompts/list and prompts/get on every MCPServer and derives
    the capabilities it advertises from the handlers it has (so it advertised prompts), and its
    prompts/get of an unknown name answered code 0 with a traceback on stderr. The SDK offers no
    way to drop a handler, hence its private table here (tests/test_mcp_protocol_errors.py holds it).
    """
    lowlevel = server._lowlevel_server  # noqa: SLF001 - see the docstring
    lowlevel._request_handlers.pop("prompts/list", None)  # noqa: SLF001

    async def no_prompt(ctx: Any, params: GetPromptRequestParams) -> Any:
        raise MCPError(code=INVALID_PARAMS, message=f"not_found: no prompt named {params.name!r} (muxd has no prompts)",
                       data={"name": params.name})

    lowlevel.add_request_handler("prompts/get", GetPromptRequestParams, no_prompt)
