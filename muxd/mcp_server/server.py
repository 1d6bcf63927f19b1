"""The MCP server object: the SDK's MCPServer with muxd's tools, talking to one daemon client."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from muxd import __version__
from muxd.client.connection import Client
from muxd.mcp_server.pane_tools import register_pane_tools
from muxd.mcp_server.summary_tools import register_summary_tools

INSTRUCTIONS = (
    "muxd runs terminal panes (AI coding agents and shells). Check agents with agent_summary or "
    "list_agents (cheap); read_pane only when you need the raw screen."
)


def build_server(client: Client) -> MCPServer[Any]:
    """An MCPServer whose tools act through `client`, a greeted connection to the daemon."""
    server: MCPServer[Any] = MCPServer(name="muxd", version=__version__, instructions=INSTRUCTIONS)
    register_summary_tools(server, client)
    register_pane_tools(server, client)
    return server
