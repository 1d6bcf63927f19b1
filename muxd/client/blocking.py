"""A blocking client of the daemon for one-shot CLI commands: one connection, one request at a time.

A command such as `muxd ls` must start about as fast as the interpreter does, so this client
needs neither asyncio nor msgspec (each costs about what the interpreter's start does): it
speaks the daemon's framed msgpack through msgpack_lite, names requests and replies by their
tags, and hands back Records, read by attribute as the Structs they stand for. The daemon checks
every request against its types; this client checks the reply's tag and id. What lives on (MCP,
attach) uses the async client (connection.py) and the typed messages.
"""

from __future__ import annotations

import posix  # os's fspath without os (~1.4 ms of a shim call to import: muxd/_environ.py)

from muxd.client.dial import dial
from muxd.config import CLIENT_CONNECT_TIMEOUT_S, PROTOCOL_VERSION
from muxd.errors import ConnectionLost, ProtocolError, ServerNotRunning, error_from_code
from muxd.protocol.framing import FrameDecoder, frame
from muxd.protocol.msgpack_lite import MsgpackError, Record, pack, unpack
# The socket's path as text, not paths.py's Path: pathlib and re cost a tmux shim call more than
# all the rest it imports (cli/tmux_fast_path.py).
from muxd.socket_names import DEFAULT_SERVER_NAME, SOCKET_DIR_REMEDY, ensure_private_dir, socket_file, split_path

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    import socket
    from pathlib import Path
    from types import TracebackType
    from typing import Any

# Below malloc's mmap threshold (128 KiB): a read's buffer then costs no mmap, mremap and munmap
# (a shim call reads twice); a long reply takes a few more reads.
READ_CHUNK_BYTES = 64 * 1024


class BlockingClient:
    def __init__(self, sock: socket.socket, path: str, token: str | None = None) -> None:
        self._sock = sock
        self._frames = FrameDecoder()
        self._bodies: list[bytes] = []  # frames read past the one asked for
        self._last_id = 0  # requests are numbered from 1
        self._outgoing: list[bytes] = []     # frames not written yet: they leave in one write
        self._ahead: dict[bytes, int] = {}   # requests sent ahead (send_ahead), by their body less the id
        self._early: dict[int, Record] = {}  # their replies, read before they were asked for
        self._greeting: int | None = None    # the id of a Hello whose Welcome is not read yet
        self.socket_path = path
        self.token = token              # what it presented at Hello (None: the socket owner)
        self._welcome: Record | None = None

    @classmethod
    def connect(cls, path: Path | str, *, client_name: str = "muxd", token: str | None = None,
                connect_timeout_s: float = CLIENT_CONNECT_TIMEOUT_S,
                reply_timeout_s: float | None = None, greet_later: bool = False,
                start: bool = False) -> BlockingClient:
        """Connect and greet; raises ServerNotRunning when nothing listens at `path`. Replies are
        awaited `reply_timeout_s` at most (ConnectionLost after), by default as long as they take.
        `greet_later`: the Hello leaves with the first request, in one write (a tmux shim call's
        round trip less); what greeting raises is raised by that first call (or `welcome`).
        `path` may be a server on another host (client/remote.py), which `start` starts there
        if none runs (a local one connect() starts)."""
        path = posix.fspath(path)
        sock = dial(path, start=start, timeout_s=connect_timeout_s)
        # By default replies may take long (submit --wait): as long as the async client waits.
        sock.settimeout(reply_timeout_s)
        client = cls(sock, str(path), token)
        client._greeting = client._queue("hello", {"protocol_version": PROTOCOL_VERSION, "client": client_name,
                                                   "token": token})
        if not greet_later:
            client._greet()
        return client

    @property
    def welcome(self) -> Record | None:
        """The server's Welcome (greeting now, if the Hello waits for a first request)."""
        if self._greeting is not None:
            self._greet()
        return self._welcome

    def _greet(self) -> None:
        hello_id, self._greeting = self._greeting, None
        assert hello_id is not None
        try:
            self._flush()
            self._welcome = self._reply(hello_id, "welcome")
        except ConnectionLost as exc:
            # Closed before any word: a daemon dying as we connected (its socket still queued us).
            self.close()
            raise ServerNotRunning(f"no server running on {self.socket_path} (the connection was reset)",
                                   socket=self.socket_path) from exc
        except BaseException:
            self.close()
            raise

    def call(self, request: str, reply: str, **fields: Any) -> Record:
        """Send the request tagged `request`, its fields `fields`, and return its reply, which must
        be tagged `reply`; Error replies raise as their typed errors, anything else ProtocolError.
        A request sent ahead with the same fields is not sent again: its reply is the answer."""
        request_id = self._ahead.pop(_ahead_key(request, fields), None) if self._ahead else None
        if request_id is None:
            request_id = self._queue(request, fields)
        if self._greeting is not None:
            self._greet()  # the daemon answers a Hello first, before any request behind it
        self._flush()
        return self._reply(request_id, reply)

    def send_ahead(self, request: str, **fields: Any) -> None:
        """Send `request` with the next write, before anyone asks: a later call() of the same
        request and fields takes its reply rather than a round trip of its own. Its reply,
        error included, waits until asked for (never asked: dropped)."""
        key = _ahead_key(request, fields)
        if key not in self._ahead:
            self._ahead[key] = self._queue(request, fields)

    def _queue(self, request: str, fields: dict[str, Any]) -> int:
        self._last_id = request_id = self._last_id + 1
        self._outgoing.append(frame(pack({"type": request, "id": request_id, **fields})))
        return request_id

    def _flush(self) -> None:
        if self._outgoing:
            data, self._outgoing = b"".join(self._outgoing), []
            try:
                self._sock.sendall(data)
            except OSError:
                pass  # a server that closed may have said why first: reading delivers that

    def _reply(self, request_id: int, reply: str) -> Record:
        message = self._early.pop(request_id, None)
        while message is None:
            message = _decode(self._next_body())
            if message.get("id") != request_id and message.get("id") in self._ahead.values():
                self._early[message.get("id")], message = message, None  # a reply sent ahead's: kept
        kind = message.get("type")
        if kind == "error":  # ours, or the connection's (id 0): either ends this call
            code, text, detail = message.get("code"), message.get("message"), message.get("detail")
            if isinstance(code, str) and isinstance(text, str) and _is_detail(detail):
                raise error_from_code(code, text, detail)
        elif kind == reply:
            if message.get("id") != request_id:
                raise ProtocolError(f"the server answered request {message.get('id')} to request {request_id}")
            return message
        raise ProtocolError(f"malformed message from server: expected {reply!r}, got {kind!r}")

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


def _ahead_key(request: str, fields: dict[str, Any]) -> bytes:
    return pack({"type": request, **fields})


def _decode(body: bytes) -> Record:
    """A message the server sent; ProtocolError for whatever else is in `body`."""
    try:
        message = unpack(body)
    except (MsgpackError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"malformed message from server: {exc}") from exc
    if not isinstance(message, Record):
        raise ProtocolError(f"malformed message from server: a {type(message).__name__}, not a message")
    return message


def _is_detail(detail: object) -> bool:
    return detail is None or isinstance(detail, dict) and all(isinstance(key, str) for key in detail)


def connect(name: str = DEFAULT_SERVER_NAME, *, start: bool = True, client_name: str = "muxd-cli",
            token: str | None = None, greet_later: bool = False, host: str | None = None) -> BlockingClient:
    """A greeted client of server `name` (as `token`'s principal, if given), starting the server
    first if `start` and none runs (as tmux does); on the host URL `host` names, if given
    (client/remote.py). `greet_later` (BlockingClient.connect) only without `start`: a server
    that resets the connection at Hello must be found here to be started."""
    if host:  # the host's proxy starts the server: the Hello can leave with the first request (a round trip less)
        from muxd.client.remote import host_address

        return BlockingClient.connect(host_address(host, name), client_name=client_name, token=token, start=start,
                                      greet_later=True)
    path = socket_file(name)
    # A socket found in a directory others can write to may be anyone's (paths.ensure_socket_dir).
    ensure_private_dir(split_path(path)[0], SOCKET_DIR_REMEDY)
    try:
        return BlockingClient.connect(path, client_name=client_name, token=token, greet_later=greet_later and not start)
    except ServerNotRunning:
        if not start:
            raise
    from muxd.client.autostart import start_unless_running  # subprocess: only when a server must start

    start_unless_running(name)
    return BlockingClient.connect(path, client_name=client_name, token=token)
