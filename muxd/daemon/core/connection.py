"""One client connection: peer check, handshake, then requests dispatched through the table.

Every failure a client can cause ends in a typed `Error` reply; only framing damage (which
makes the rest of the stream unreadable) also closes the connection. Nothing a client
sends can stop the daemon from serving the others.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import struct
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Protocol

from muxd import __version__
from muxd.config import (
    CONNECTION_REQUESTS_IN_FLIGHT_MAX, CONNECTION_WRITE_HIGH_WATER_BYTES, CONNECTION_WRITE_LOW_WATER_BYTES,
    PROTOCOL_VERSION,
)
from muxd.errors import BadRequest, Forbidden, MuxdError, ProtocolError, VersionMismatch
from muxd.protocol.codec import decode_request, encode, encode_shown, peek_envelope
from muxd.protocol.framing import FrameDecoder
from muxd.daemon.client_side.hub import ATTACH_MESSAGES
from muxd.daemon.access.control import SYSTEM, AccessControl, Principal, may_read_tasks
from muxd.daemon.attention.hooks_runner import HOOK_CLIENT_NAME, handling_hook_request
from muxd.daemon.core.config_load import CONFIG_CLIENT_NAME
from muxd.protocol.event_messages import TASK_EVENT_KINDS, DaemonEvent, check_kinds, wanted
from muxd.protocol.messages import Error, Hello, Ok, Subscribe, Welcome

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Registry
    from muxd.daemon.panes.target import TargetKind

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 256 * 1024
# A subscriber this far behind on events is dropped rather than buffered without bound.
EVENT_BACKLOG_MAX_BYTES = 4 * 1024 * 1024
# How long a closing connection waits for each of its requests still running.
REQUEST_FINISH_TIMEOUT_S = 5.0
_PEERCRED = struct.Struct("3i")


def peer_uid(sock: socket.socket) -> int | None:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    except OSError:
        return None
    return _PEERCRED.unpack(creds)[1]


def _plain(detail: dict[str, Any]) -> dict[str, Any]:
    """Error details must cross the wire: anything exotic becomes its text."""
    return {k: v if isinstance(v, (str, int, float, bool, type(None), list)) else str(v)
            for k, v in detail.items()}


class CommandEntry(Protocol):
    """A row of the command table (daemon/commands/table.py)."""

    @property
    def handler(self) -> Callable[..., Awaitable[Any]]: ...
    @property
    def target(self) -> TargetKind | None: ...


class AttachedTerminals(Protocol):
    """The attach hub (daemon/client_side/hub.py), as a connection hands it its stream."""

    def receive(self, connection: Connection, message: Any) -> None: ...
    def input_pane(self, connection: Connection) -> Pane | None:
        """The pane an attached terminal on `connection` types into, if any."""
    def connection_closed(self, connection: Connection) -> None: ...


class ServingDaemon(Protocol):
    """What a connection uses of the daemon (server.py). Handlers are handed this same object
    and get the whole daemon, by design (daemon/commands/)."""

    @property
    def commands(self) -> Mapping[type, CommandEntry]: ...
    @property
    def access(self) -> AccessControl: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def subscribers(self) -> set[Connection]: ...
    @property
    def attach_hub(self) -> AttachedTerminals: ...
    @property
    def config_loaded(self) -> asyncio.Event: ...
    def replied(self) -> None:
        """A request was answered (the first lets the daemon finish its start: server.py)."""


class Connection:
    def __init__(self, daemon: ServingDaemon, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.daemon = daemon
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder()
        self.greeted = False
        self.client_name = ""  # what its Hello called it
        self.principal: Principal = SYSTEM  # until Hello names another (muxd/daemon/access/control.py)
        self.event_panes: set[str] | None = None  # None: every pane (when subscribed)
        self.bus_events = False  # subscribed to the bus's DaemonEvents (else to state changes and exits)
        self.event_kinds: frozenset[str] | None = None  # with bus_events: these kinds only; None: all
        self._tasks: set[asyncio.Task[None]] = set()
        self.heard_at = 0.0  # time.monotonic() it last sent something (requests, keys)

    async def serve(self) -> None:
        try:
            if not self._peer_allowed():
                return
            self.writer.transport.set_write_buffer_limits(
                high=CONNECTION_WRITE_HIGH_WATER_BYTES, low=CONNECTION_WRITE_LOW_WATER_BYTES)
            while True:
                data = await self.reader.read(READ_CHUNK_BYTES)
                self.heard_at = time.monotonic()
                if not data or not await self._handle_data(data):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            await self._close()

    async def _handle_data(self, data: bytes) -> bool:
        """Handle the frames `data` completes, each once there is room for it; False means
        the connection must close."""
        while True:
            try:
                bodies = self.decoder.feed(data)
            except ProtocolError as exc:
                await self._finish_requests()  # the frames before the damage are answered first
                self.send(Error(id=0, code=exc.code, message=exc.message, detail=_plain(exc.detail)))
                return False  # the framing is lost: nothing after this can be trusted
            if not bodies:
                return True
            for body in bodies:
                await self._wait_for_room()
                if not await self._handle_body(body):
                    return False
            data = b""  # damage may wait behind these frames: the decoder raises it on this feed

    async def _wait_for_room(self) -> None:
        """Backpressure: a peer that sends requests and does not read the replies is not read
        either, rather than growing the daemon by every reply it leaves unread."""
        if self._tasks:  # the request before runs first: a reply made at once is in the buffer now
            await asyncio.sleep(0)
        while len(self._tasks) >= CONNECTION_REQUESTS_IN_FLIGHT_MAX:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
        await self.writer.drain()  # returns at once below the high-water mark; else waits for the low
        pane = self.daemon.attach_hub.input_pane(self)
        if pane is not None:  # an attached terminal types at the pace its pane reads (a big paste)
            await pane.input_room()

    def hang_up(self) -> None:
        """End the connection's sending side now, not at a later loop step: the peer reads its
        end before any reply written after this (a revoked token's connections)."""
        sock = self.writer.get_extra_info("socket")
        if sock is None or sock.fileno() < 0:
            return
        try:  # through a duplicate: the transport's own socket object refuses shutdown()
            with socket.fromfd(sock.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as same:
                same.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # already gone

    def _peer_allowed(self) -> bool:
        sock = self.writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid == os.getuid():
            return True
        log.warning("refused a connection from uid %s", uid)
        self.send(Error(id=0, code=Forbidden.code,
                        message=f"connection from uid {uid} refused: this server belongs to uid {os.getuid()}"))
        return False

    async def _handle_body(self, body: bytes) -> bool:
        """Handle one frame; False means the connection must close."""
        try:
            request = decode_request(body)
        except BadRequest as exc:  # ProtocolError, or NotUtf8 for a name given bytes (os_bytes.py)
            self.send(Error(id=peek_envelope(body).id, code=exc.code, message=exc.message,
                            detail=_plain(exc.detail)))
            return True
        if not self.greeted:
            return self._greet(request)
        if isinstance(request, Hello):
            self.send(Error(id=request.id, code=BadRequest.code, message="already greeted"))
            return True
        if isinstance(request, (*ATTACH_MESSAGES, Subscribe)):  # connection state: handled here, now
            try:  # the one gate every request passes: tier and pane scope (muxd/daemon/access/control.py)
                self.daemon.access.authorize(self.principal, request, None, self.daemon.registry)
            except MuxdError as exc:
                self.send(Error(id=getattr(request, "id", 0), code=exc.code, message=exc.message,
                                detail=_plain(exc.detail)))
                return True
            if isinstance(request, Subscribe):
                self._subscribe(request)
            else:  # a terminal client's stream (daemon/client_side/attached.py)
                self.daemon.attach_hub.receive(self, request)
            return True
        task = asyncio.create_task(self._dispatch(request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    def _greet(self, request: Any) -> bool:
        if not isinstance(request, Hello):
            self.send(Error(id=request.id, code=BadRequest.code,
                            message="the first message must be hello"))
            return False
        if request.protocol_version != PROTOCOL_VERSION:
            self.send(Error(id=request.id, code=VersionMismatch.code,
                            message=f"protocol version {request.protocol_version} is not supported; "
                                    f"this server speaks {PROTOCOL_VERSION}",
                            detail={"server_version": PROTOCOL_VERSION}))
            return False
        try:  # an unknown or revoked token: `unauthorized`, and the connection closes
            self.principal = self.daemon.access.principal_for(request.token)
        except MuxdError as exc:
            self.send(Error(id=request.id, code=exc.code, message=exc.message))
            return False
        self.greeted = True
        self.client_name = request.client
        visible = self.daemon.access.visible(self.principal)
        self.send(Welcome(id=request.id, protocol_version=PROTOCOL_VERSION,
                          server_version=__version__, principal=self.principal.name, pid=os.getpid(),
                          tier=self.principal.tier, panes=None if visible is None else sorted(visible),
                          scopes=sorted(self.principal.scopes)))
        return True

    async def _dispatch(self, request: Any) -> None:
        daemon = self.daemon
        if not daemon.config_loaded.is_set() and self.client_name != CONFIG_CLIENT_NAME:
            await daemon.config_loaded.wait()  # as in tmux, commands see what the config file made
        try:
            command = daemon.commands.get(type(request))
            if command is None:
                raise BadRequest(f"{type(request).__name__} is not handled by this server")
            # Check and run in one step, with no await in between: the target resolved and checked
            # here is the one the handler acts on, whatever other clients do meanwhile.
            resolved = daemon.access.authorize(self.principal, request, command.target, daemon.registry,
                                                remote=command.remote)
            arguments = () if command.target is None else (resolved,)
            with handling_hook_request() if self.client_name == HOOK_CLIENT_NAME else nullcontext():
                reply = await daemon.access.run(self.principal, request, daemon.registry,
                                                lambda: command.handler(daemon, request, *arguments))
        except MuxdError as exc:
            reply = Error(id=request.id, code=exc.code, message=exc.message, detail=_plain(exc.detail))
        except Exception as exc:  # a bug must cost one request, not the daemon
            log.exception("request %s failed", type(request).__name__)
            reply = Error(id=request.id, code="internal", message=f"internal error: {exc!r}")
        self.send(reply)
        daemon.replied()

    async def _finish_requests(self) -> None:
        for task in list(self._tasks):
            await asyncio.wait({task}, timeout=REQUEST_FINISH_TIMEOUT_S)

    def _subscribe(self, request: Subscribe) -> None:
        try:
            check_kinds(request.kinds)
        except BadRequest as exc:
            self.send(Error(id=request.id, code=exc.code, message=exc.message))
            return
        self.event_panes = set(request.panes) if request.panes is not None else None
        self.bus_events = request.events
        self.event_kinds = frozenset(request.kinds) if request.kinds is not None else None
        self.daemon.subscribers.add(self)
        self.send(Ok(id=request.id))

    def deliver_event(self, event: Any, pane_id: str) -> None:
        """A state change or an exit (AgentStateChanged, PaneExited) to a subscriber of those."""
        if not self.bus_events and self._hears(pane_id):
            self._send_event(event)

    def deliver_bus_event(self, event: DaemonEvent) -> None:
        """One of the bus's events to a subscriber of its kind that may see its pane; events of
        no pane (a session made) only to those that see every pane and asked for every pane."""
        if not self.bus_events or not wanted(event.kind, self.event_kinds):
            return
        if event.kind in TASK_EVENT_KINDS:  # the queue's: to whom may read it, whatever panes it sees
            if may_read_tasks(self.principal):
                self._send_event(event)
        elif event.pane_id is None:
            if self.event_panes is None and self.daemon.access.visible(self.principal) is None:
                self._send_event(event)
            elif event.kind == "fleet-changed" and self._hears_host(event.host):
                self._send_event(event)
        elif self._hears(event.pane_id):
            self._send_event(event)

    def _hears_host(self, host: str | None) -> bool:
        """Whether a pane this subscriber hears is on `host` (None: on any other host): another
        host's changes matter to a pane-bound token bound to a pane there (`%N@host`)."""
        visible, asked = self.daemon.access.visible(self.principal), self.event_panes
        panes = asked if visible is None else visible if asked is None else visible & asked
        return any(pane.endswith("@" + host) if host else "@" in pane for pane in panes or ())

    def _hears(self, pane_id: str) -> bool:
        if self.event_panes is not None and pane_id not in self.event_panes:
            return False
        return self.daemon.access.sees(self.principal, pane_id)

    def _send_event(self, event: Any) -> None:
        if self.writer.transport.get_write_buffer_size() > EVENT_BACKLOG_MAX_BYTES:
            log.warning("dropping a subscriber that stopped reading its events")
            self.daemon.subscribers.discard(self)
            self.writer.transport.abort()
            return
        self.send(event)

    def send(self, message: Any) -> None:
        if self.writer.is_closing():
            return  # the client went away mid-request; its answer has nowhere to go
        try:
            self.writer.write(encode_shown(message))
        except MuxdError as exc:  # e.g. a reply over MAX_FRAME_BYTES
            self.writer.write(encode(Error(id=getattr(message, "id", 0), code=exc.code, message=exc.message)))

    async def _close(self) -> None:
        self.daemon.subscribers.discard(self)
        self.daemon.attach_hub.connection_closed(self)
        await self._finish_requests()
        try:
            self.writer.close()
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass
