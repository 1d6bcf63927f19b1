"""Which daemon connection the current MCP call acts through.

Over stdio there is one connection for the whole server; over HTTP each bearer token gets its own
connection (so the daemon sees, and enforces, that token's principal). Tools and guards ask
`current_client()` instead of holding a connection of their own.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from muxd.client.connection import Client
from muxd.errors import MuxdError, NotFound

_current: ContextVar[Client | None] = ContextVar("muxd_mcp_client", default=None)
_default: Client | None = None
# The token each connection presented, for the extra connections a call opens (wait_for's events).
_tokens: weakref.WeakKeyDictionary[Client, str] = weakref.WeakKeyDictionary()


def remember_token(client: Client, token: str | None) -> None:
    """Note that `client` was greeted with `token`, so helpers can open connections as the same principal."""
    if token:
        _tokens[client] = token


def token_of(client: Client) -> str | None:
    """The token `client` presented at Hello (None: the socket owner's own connection)."""
    return _tokens.get(client)


def set_default_client(client: Client | None) -> None:
    """The connection used when no call-specific one is set (stdio: the only one)."""
    global _default
    _default = client


@contextmanager
def acting_as(client: Client) -> Iterator[Client]:
    """Run the enclosed calls through `client` (HTTP: the caller's bearer-token connection)."""
    reset = _current.set(client)
    try:
        yield client
    finally:
        _current.reset(reset)


async def connect_as_caller(client_name: str, on_event: Callable[[Any], None]) -> Client:
    """A new daemon connection presenting the current call's token (so the daemon tells it only what
    that caller may see), its events given to `on_event`. The caller closes it."""
    client = current_client()
    if not client.socket_path:
        raise NotFound("cannot tell the daemon's socket path for an event connection")
    return await Client.connect(client.socket_path, client_name=client_name, token=token_of(client),
                                on_event=on_event)


def current_client() -> Client:
    client = _current.get() or _default
    if client is None:
        raise MuxdError("the MCP server has no daemon connection")
    return client


def current_principal() -> str:
    """The principal the daemon granted the current connection ("system" for the socket owner)."""
    welcome = current_client().welcome
    return welcome.principal if welcome is not None else "system"
