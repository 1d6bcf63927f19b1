"""The command table: each request type maps to one small handler, declared next to its kin.

A handler is `async def handler(daemon, request) -> Reply`; it raises MuxdError subclasses for
anything the client should hear about. Modules register with `@command(RequestType)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon

Handler = Callable[["Daemon", Any], Awaitable[Any]]
COMMANDS: dict[type, Handler] = {}
H = TypeVar("H", bound=Handler)


def command(request_type: type) -> Callable[[H], H]:
    def register(handler: H) -> H:
        if request_type in COMMANDS:
            raise RuntimeError(f"two handlers for {request_type.__name__}")
        COMMANDS[request_type] = handler
        return handler

    return register


def load_all() -> dict[type, Handler]:
    """Import every command module (each registers itself) and return the table."""
    from muxd.daemon.commands import agents, panes, server, sessions  # noqa: F401
    from muxd.daemon.commands import access  # noqa: F401 - tokens, grants, audit, metrics

    return COMMANDS
