"""The stdio server's one daemon connection, opened when a request first needs it.

`muxd mcp` over stdio never starts a daemon: a server nobody has panes in would answer every
question with an empty fleet (a client that strips the environment once got one in another
socket directory). Until the user's server runs, each tool call answers `server_not_running`
saying where muxd looked; the first call after it starts connects, and a connection the daemon
dropped (it closed or restarted) is opened again on the next call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from muxd.client.connection import Client
from muxd.errors import HostUnreachable, ServerNotRunning
from muxd.mcp_server.link import remember_token, set_default_client
from muxd.mcp_server.middleware import TOOLS_CALL

CLIENT_NAME = "muxd-mcp"
# The requests whose handlers talk to the daemon; the others (initialize, tools/list, …) are the SDK's own.
DAEMON_METHODS = frozenset({TOOLS_CALL, "resources/read", "resources/subscribe", "resources/unsubscribe",
                            "subscriptions/listen"})


def no_server_text(exc: ServerNotRunning, path: str) -> str:
    if isinstance(exc, HostUnreachable):  # ssh's failure (muxd mcp -H): its own words say what to fix
        return f"{exc.code}: {exc.message}"
    return (f"{exc.code}: no muxd server runs at {path} (start one: `muxd new-session` or `muxd start-server`, "
            "with the same MUXD_SOCKET_DIR as this MCP server if you set one)")


class DaemonLink:
    """The connection to the daemon at `path`, as `token`'s principal, opened on first need."""

    def __init__(self, path: str, token: str | None) -> None:
        self.path = path
        self.token = token
        self.client: Client | None = None
        self._lock = asyncio.Lock()

    async def ensure(self) -> Client:
        """The open connection, opened now if there is none; ServerNotRunning when no daemon answers."""
        async with self._lock:
            if self.client is None or self.client.closed:
                client = await Client.connect(self.path, client_name=CLIENT_NAME, token=self.token)
                remember_token(client, self.token)
                set_default_client(client)
                self.client = client
            return self.client

    async def close(self) -> None:
        async with self._lock:
            client, self.client = self.client, None
            set_default_client(None)
        if client is not None:
            await client.close()


def connect_on_demand(link: DaemonLink) -> Callable[[ServerRequestContext[Any, Any], CallNext], Any]:
    """Middleware opening `link` before a request that needs the daemon; with no daemon, a tool call
    answers a `server_not_running` tool error (what a model reads) and other requests a JSON-RPC error."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in DAEMON_METHODS:
            return await call_next(ctx)
        try:
            await link.ensure()
        except ServerNotRunning as exc:
            text = no_server_text(exc, link.path)
            if ctx.method == TOOLS_CALL:
                return {"content": [{"type": "text", "text": text}], "isError": True}
            raise MCPError(code=INTERNAL_ERROR, message=text) from None
        return await call_next(ctx)

    return middleware
