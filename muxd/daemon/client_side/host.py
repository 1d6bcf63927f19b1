"""What the client side uses of the daemon and of a connection. server.py's Daemon and
core/connection.py's Connection are these: they are handed in, never imported, so the client
side sits below the server that builds it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from muxd.daemon.access.control import Principal
    from muxd.daemon.attention.service import Attention
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Registry, Window
    from muxd.protocol.messages import Spawn


class AttachHost(Protocol):
    """The daemon as attached clients see it: its registry, its socket (the status formats'
    variables, the command prompt's CLI), new panes (the new-window and split keys) and its
    attention (the board of agents that need a person, the event bus: a client attached, detached)."""

    @property
    def registry(self) -> Registry: ...

    @property
    def socket_path(self) -> Path: ...

    @property
    def attention(self) -> Attention: ...

    def spawn_pane(self, window: Window, spawn: Spawn, columns: int, lines: int) -> Pane: ...


class ClientConnection(Protocol):
    """The connection of an attached terminal: frames out, a writer to wait on, and whose
    connection it is (the command prompt is the owner's)."""

    @property
    def principal(self) -> Principal: ...

    @property
    def writer(self) -> asyncio.StreamWriter: ...

    def send(self, message: Any) -> None: ...
