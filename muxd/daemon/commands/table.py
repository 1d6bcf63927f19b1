"""The command table itself: `@command(RequestType, target=...)` registers a handler (see __init__.py
for the handler's shape). Command modules import this, never the package, which imports them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

if TYPE_CHECKING:
    from muxd.daemon.panes.target import TargetKind

Handler = Callable[..., Awaitable[Any]]
H = TypeVar("H", bound=Handler)


class Command(msgspec.Struct, frozen=True):
    handler: Handler
    target: TargetKind | None = None  # what `request.target` names; None: the handler reads no target
    remote: bool = False  # the target may be another host's pane (`%N@host`): the handler gets a RemotePane


COMMANDS: dict[type, Command] = {}


def command(request_type: type, *, target: TargetKind | None = None, remote: bool = False) -> Callable[[H], H]:
    def register(handler: H) -> H:
        if request_type in COMMANDS:
            raise RuntimeError(f"two handlers for {request_type.__name__}")
        COMMANDS[request_type] = Command(handler, target, remote)
        return handler

    return register
