"""An async client of the daemon: one connection, many requests in flight, matched by id."""

from __future__ import annotations

import asyncio
import itertools
import os
import select
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from muxd.config import CLIENT_CONNECT_TIMEOUT_S, PROTOCOL_VERSION
from muxd.errors import ClientClosed, ConnectionLost, MuxdError, ProtocolError, ServerNotRunning, error_from_code
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Error, Event, Hello, Welcome
from muxd.socket_names import REMOTE_SCHEME

READ_CHUNK_BYTES = 256 * 1024
# The peer shut its sending side (Linux says so apart from unread data), or the socket broke.
_PEER_ENDED = getattr(select, "POLLRDHUP", 0) | select.POLLHUP | select.POLLERR
R = TypeVar("R")


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 on_event: Callable[[Event], None] | None = None) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._on_event = on_event
        self._failure: MuxdError | None = None
        self._reader_task = asyncio.create_task(self._read_loop())
        self.welcome: Welcome | None = None
        self.socket_path: str | None = None  # where this client connected (set by connect())

    @classmethod
    async def connect(cls, path: Path | str, *, client_name: str = "muxd",
                      token: str | None = None, on_event: Callable[[Event], None] | None = None,
                      ) -> Client:
        """Connect and greet; raises ServerNotRunning when nothing listens at `path`, a server
        on another host (client/remote.py) included."""
        if str(path).startswith(REMOTE_SCHEME):
            from muxd.client.remote import open_remote  # ssh's subprocess: only for a remote server

            # ssh's login blocks: in a thread, so the loop goes on serving meanwhile (MCP calls).
            sock = await asyncio.to_thread(open_remote, str(path))
            reader, writer = await asyncio.open_unix_connection(sock=sock)
            return await cls._greeted(reader, writer, str(path), client_name, token, on_event)
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(path)), CLIENT_CONNECT_TIMEOUT_S)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise ServerNotRunning(f"no server running on {path}", socket=str(path)) from exc
        except PermissionError as exc:
            raise ServerNotRunning(f"cannot reach {path}: permission denied", socket=str(path)) from exc
        return await cls._greeted(reader, writer, str(path), client_name, token, on_event)

    @classmethod
    async def _greeted(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str,
                       client_name: str, token: str | None, on_event: Callable[[Event], None] | None) -> Client:
        client = cls(reader, writer, on_event)
        client.socket_path = path
        try:
            welcome = await client.call(Hello, protocol_version=PROTOCOL_VERSION,
                                        client=client_name, token=token)
        except ConnectionLost as exc:
            # Reset before any word: a daemon dying as we connected (its socket still queued us).
            await client.close()
            raise ServerNotRunning(f"no server running on {path} (the connection was reset)",
                                   socket=str(path)) from exc
        except BaseException:
            await client.close()
            raise
        assert isinstance(welcome, Welcome)
        client.welcome = welcome
        return client

    @property
    def closed(self) -> bool:
        """True once the connection ended (the server closed it, or it broke): every call would fail."""
        return self._failure is not None

    def hung_up(self) -> bool:
        """True once the server ended the connection, even when the reader has not yet taken its
        end in: a look at the socket now (POLLRDHUP), for a caller that must not use a
        connection the server just ended, such as one greeted with a token it revoked."""
        if self._failure is not None:
            return True
        sock = self._writer.get_extra_info("socket")
        if sock is None:
            return False
        poller = select.poll()
        poller.register(sock.fileno(), _PEER_ENDED)
        return bool(poller.poll(0))

    async def ended(self) -> MuxdError:
        """Wait until the connection ends (the server went, or it broke); what ended it."""
        await asyncio.shield(self._reader_task)
        assert self._failure is not None
        return self._failure

    async def wait_lost(self) -> None:
        """Return once the connection has ended (the server closed it, it broke, or close())."""
        await asyncio.wait({self._reader_task})

    async def call(self, message_type: type[R], **fields: Any) -> Any:
        """Send one request built from `fields` and return its reply; Error replies raise."""
        future = self.send(message_type, **fields)
        try:
            try:
                await self._writer.drain()
            except (ConnectionError, OSError):
                pass  # a server that closed may have said why first: the reader delivers that
            reply = await future
        finally:
            future.cancel()  # given up on (cancelled, timed out): its late reply is dropped
        if isinstance(reply, Error):
            raise error_from_code(reply.code, reply.message, reply.detail)
        return reply

    def send(self, message_type: type[R], **fields: Any) -> asyncio.Future[Any]:
        """Write one request now, before returning, and give the future of its raw reply (an Error
        reply is a result, not raised): for what the caller need not wait on, such as an audit
        record that must reach the daemon before the caller's next request."""
        if self._failure is not None:
            raise self._failure
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        future.add_done_callback(lambda _: self._pending.pop(request_id, None))
        try:
            self._writer.write(encode(message_type(id=request_id, **fields)))
        except (ConnectionError, OSError):
            pass  # a server that closed may have said why first: the reader delivers that
        return future

    async def _read_loop(self) -> None:
        decoder = FrameDecoder()
        failure: MuxdError = ConnectionLost("the server closed the connection")
        try:
            while True:
                data = await self._reader.read(READ_CHUNK_BYTES)
                if not data:
                    break
                for body in decoder.feed(data):
                    self._deliver(decode_server_message(body))
        except ProtocolError as exc:
            failure = exc
        except (ConnectionError, OSError) as exc:
            failure = ConnectionLost(f"connection lost: {exc}")
        except asyncio.CancelledError:
            failure = ClientClosed("client closed")
        self._fail_all(failure)

    def _deliver(self, message: Any) -> None:
        request_id = getattr(message, "id", None)
        if request_id is None:
            if self._on_event is not None:
                self._on_event(message)
            return
        future = self._pending.get(request_id)
        if future is not None and not future.done():
            future.set_result(message)
        elif request_id == 0 and isinstance(message, Error):  # a connection-level error: fail everyone
            self._fail_all(error_from_code(message.code, message.message, message.detail))
        # else: the late reply to a request its caller gave up on (a timeout): nobody waits for it

    def _fail_all(self, error: MuxdError) -> None:
        if self._failure is None:
            self._failure = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)

    async def close(self) -> None:
        self._reader_task.cancel()
        try:
            self._writer.close()
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass


def socket_is_live(path: Path) -> bool:
    """True when something accepts connections at `path` (a cheap, synchronous probe)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(os.fspath(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()
