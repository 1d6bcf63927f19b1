"""The MCP server object: the SDK's MCPServer with muxd's guarded tools.

Tools reach the daemon through `link.current_client()`: over stdio the one connection given
here, over HTTP the connection of each request's bearer token (see http_server.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerMiddleware
from mcp.server.mcpserver import MCPServer

from muxd import __version__
from muxd.client.connection import Client
from muxd.mcp_server.engine_tools import register_engine_tools
from muxd.mcp_server.event_resources import register_event_resources
from muxd.mcp_server.event_streams import register_event_streams
from muxd.mcp_server.execution_tools import register_execution_tools
from muxd.mcp_server.guards import ToolGuard
from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.link import set_default_client
from muxd.mcp_server.middleware import tidy_tool_results
from muxd.mcp_server.pane_tools import register_pane_tools
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.summary_tools import register_summary_tools
from muxd.mcp_server.task_history_tools import register_task_history_tools
from muxd.mcp_server.task_tools import register_task_tools
from muxd.mcp_server.wait_tools import register_wait_tools

INSTRUCTIONS = (
    "muxd runs terminal panes (AI coding agents and shells). Check agents with agent_summary or "
    "list_agents (cheap); read_pane only when you need the raw screen (pass its cursor back to get "
    "only new lines); wait_for instead of polling (with attention and no pane_id: until any agent "
    "needs you). send_task gives an agent a prompt as a tracked execution; "
    "the history (list_recent_executions, get_execution_result, get_agent_activity_summary, tasks_*) says what ran, "
    "how it ended and what it cost. The resources muxd://events and muxd://panes/{pane}/attention can be "
    "read and subscribed to."
)


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
    server: MCPServer[Any] = MCPServer(name="muxd", version=__version__, instructions=INSTRUCTIONS,
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
    return tools


def build_server(client: Client, limits: GuardLimits | None = None,
                 categories: Iterable[str] | None = None) -> MCPServer[Any]:
    """An MCPServer whose tools act through `client`, a greeted connection to the daemon."""
    return build_registry(client, limits, categories=categories).server
