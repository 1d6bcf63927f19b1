"""A blocking client of the daemon for one-shot CLI commands: one connection, one request at a time.

A command such as `muxd ls` must start about as fast as the interpreter does, so this client
needs neither asyncio nor the message unions (their modules cost tens of milliseconds): each
call names the reply it expects, and only that type and Error are decoded. What lives on (MCP,
attach) uses the async client (connection.py); both share the framing and the body codec.
"""

from __future__ import annotations

import itertools
import os
import socket
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, Union

import msgspec

from muxd.config import CLIENT_CONNECT_TIMEOUT_S, PROTOCOL_VERSION
from muxd.errors import ConnectionLost, ProtocolError, ServerNotRunning, error_from_code
from muxd.paths import DEFAULT_SERVER_NAME, ensure_socket_dir, socket_path
from muxd.protocol.bodies import decode_from_server, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.pane_messages import Error, Hello, Welcome

READ_CHUNK_BYTES = 256 * 1024
R = TypeVar("R")


class BlockingClient:
    def __init__(self, sock: socket.socket, path: str, token: str | None = None) -> None:
        self._sock = sock
        self._frames = FrameDecoder()
        self._bodies: list[bytes] = []  # frames read past the one asked for
        self._ids = itertools.count(1)
        self._decoders: dict[type, msgspec.msgpack.Decoder[Any]] = {}
        self.socket_path = path
        self.token = token              # what it presented at Hello (None: the socket owner)
        self.welcome: Welcome | None = None

    @classmethod
    def connect(cls, path: Path | str, *, client_name: str = "muxd", token: str | None = None) -> BlockingClient:
        """Connect and greet; raises ServerNotRunning when nothing listens at `path`."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(CLIENT_CONNECT_TIMEOUT_S)
            sock.connect(os.fspath(path))
            sock.settimeout(None)  # replies may take long (submit --wait): as long as the async client waits
        except OSError as exc:
            sock.close()
            if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
                raise ServerNotRunning(f"no server running on {path}", socket=str(path)) from exc
            why = "permission denied" if isinstance(exc, PermissionError) else exc.strerror or str(exc)
            raise ServerNotRunning(f"cannot reach {path}: {why}", socket=str(path)) from exc
        client = cls(sock, str(path), token)
        try:
            client.welcome = client.call(Hello, Welcome, protocol_version=PROTOCOL_VERSION, client=client_name,
                                         token=token)
        except ConnectionLost as exc:
            # Closed before any word: a daemon dying as we connected (its socket still queued us).
            client.close()
            raise ServerNotRunning(f"no server running on {path} (the connection was reset)",
                                   socket=str(path)) from exc
        except BaseException:
            client.close()
            raise
        return client

    def call(self, message_type: type[Any], reply_type: type[R], **fields: Any) -> R:
        """Send one request built from `fields` and return its reply, a `reply_type`; Error replies
        raise, and so does any other message (ProtocolError)."""
        request_id = next(self._ids)
        try:
            self._sock.sendall(encode(message_type(id=request_id, **fields)))
        except OSError:
            pass  # a server that closed may have said why first: reading delivers that
        reply = decode_from_server(self._decoder(reply_type), self._next_body())
        if isinstance(reply, Error):  # ours, or the connection's (id 0): either ends this call
            raise error_from_code(reply.code, reply.message, reply.detail)
        if reply.id != request_id:
            raise ProtocolError(f"the server answered request {reply.id} to request {request_id}")
        return reply

    def _decoder(self, reply_type: type[Any]) -> msgspec.msgpack.Decoder[Any]:
        decoder = self._decoders.get(reply_type)
        if decoder is None:
            decoder = self._decoders[reply_type] = msgspec.msgpack.Decoder(Union[reply_type, Error])
        return decoder

    def _next_body(self) -> bytes:
        while not self._bodies:
            try:
                data = self._sock.recv(READ_CHUNK_BYTES)
            except OSError as exc:
                raise ConnectionLost(f"connection lost: {exc}") from exc
            if not data:
                raise ConnectionLost("the server closed the connection")
            self._bodies += self._frames.feed(data)
        return self._bodies.pop(0)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> BlockingClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def connect(name: str = DEFAULT_SERVER_NAME, *, start: bool = True, client_name: str = "muxd-cli",
            token: str | None = None) -> BlockingClient:
    """A greeted client of server `name` (as `token`'s principal, if given), starting the server
    first if `start` and none runs (as tmux does)."""
    path = socket_path(name)
    ensure_socket_dir(path.parent)  # a socket found in a directory others can write to may be anyone's
    try:
        return BlockingClient.connect(path, client_name=client_name, token=token)
    except ServerNotRunning:
        if not start:
            raise
    from muxd.client.autostart import start_unless_running  # subprocess: only when a server must start

    start_unless_running(name)
    return BlockingClient.connect(path, client_name=client_name, token=token)
