"""Where an attached client's terminal output goes: over its socket (AttachOutput messages, which
the `muxd attach` process writes to its terminal) or straight to the terminal itself, whose
descriptor that process passed over the socket (SCM_RIGHTS), as tmux's server writes to its
clients' terminals: the client process then costs nothing a frame.

The passed descriptor shares its open file description (and so O_NONBLOCK) with the client's own
writes; the daemon reopens the terminal through /proc/self/fd instead, which gives it a
description of its own, non-blocking, that never becomes its controlling terminal."""

from __future__ import annotations

import array
import asyncio
import logging
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from muxd.protocol.messages import AttachOutput

if TYPE_CHECKING:
    from muxd.daemon.client_side.host import ClientConnection

log = logging.getLogger(__name__)

# How long the daemon waits for the descriptor it asked for before it serves over the socket.
TTY_PASS_TIMEOUT_S = 5.0
# What one write offers the terminal: a pty takes a few KiB at a time anyway.
TTY_WRITE_MAX_BYTES = 256 * 1024


class SocketOutput:
    """Terminal output as AttachOutput messages on the client's connection (ssh, no terminal,
    MUXD_ATTACH_DIRECT=0): the connection's transport buffers it."""

    direct = False

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    def write(self, data: bytes) -> None:
        self.connection.send(AttachOutput(data=data))

    def backlog(self) -> int:
        return self.connection.writer.transport.get_write_buffer_size()

    async def drain(self) -> None:
        await self.connection.writer.drain()

    def close(self) -> None:
        pass


class TtyOutput:
    """Terminal output written by the daemon to the client's terminal: non-blocking writes, what
    the terminal does not take at once kept in order and written as the loop says it can (frames
    wait for it to empty, as they wait for the socket's transport)."""

    direct = True

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = bytearray()
        self._waiting = False  # add_writer is on
        self._drained: asyncio.Future[None] | None = None

    def write(self, data: bytes) -> None:
        if self.fd < 0:
            return  # the terminal is gone or the client left: its own end restores it
        if self._pending:
            self._pending += data
            return
        self._pending += data
        self._flush()

    def backlog(self) -> int:
        return len(self._pending)

    async def drain(self) -> None:
        if not self._pending:
            return
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._drained)

    def _flush(self) -> None:
        while self._pending and self.fd >= 0:
            try:
                count = os.write(self.fd, memoryview(self._pending)[:TTY_WRITE_MAX_BYTES])
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # the terminal closed (EIO): the client ends by itself
                log.info("attached terminal write failed: %s", exc)
                self.close()
                return
            del self._pending[:count]
        if self._pending and not self._waiting:
            asyncio.get_running_loop().add_writer(self.fd, self._flush)
            self._waiting = True
        elif not self._pending:
            self._stop_waiting()

    def _stop_waiting(self) -> None:
        if self._waiting:
            asyncio.get_running_loop().remove_writer(self.fd)
            self._waiting = False
        if self._drained is not None:
            if not self._drained.done():
                self._drained.set_result(None)
            self._drained = None

    def close(self) -> None:
        """Stop writing to the terminal: one last try for what is pending (a frame cut short
        is fine, the client's leave sequence follows it), then the descriptor goes."""
        if self.fd < 0:
            return
        try:
            if self._pending:
                del self._pending[:os.write(self.fd, self._pending)]
        except OSError:
            pass
        self._pending.clear()
        self._stop_waiting()
        os.close(self.fd)
        self.fd = -1


def open_passed_tty(passed: int) -> int:
    """The daemon's own descriptor of the terminal `passed` is, opened write-only and
    non-blocking; OSError unless `passed` is a terminal."""
    if not os.isatty(passed):
        raise OSError("the passed descriptor is not a terminal")
    fd = os.open(f"/proc/self/fd/{passed}", os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not os.isatty(fd):
        os.close(fd)
        raise OSError("the reopened descriptor is not a terminal")
    return fd


def receive_tty(connection: ClientConnection, done: Callable[[TtyOutput | None], None]) -> None:
    """Take the terminal descriptor the client sends after the Attached reply (one byte with it
    as SCM_RIGHTS), reading nothing else of the connection meanwhile; `done` gets its output,
    or None to serve over the socket (no descriptor, not a terminal, the client went)."""
    transport: Any = connection.writer.transport
    sock = connection.writer.get_extra_info("socket")
    if sock is None or transport.is_closing():
        done(None)
        return
    transport.pause_reading()  # the byte and its descriptor are read here, with recvmsg
    loop = asyncio.get_running_loop()
    # The transport's descriptor is its own in the loop's selector: the wait is on a duplicate.
    reader = socket.socket(fileno=os.dup(sock.fileno()))
    reader.setblocking(False)

    def finish(output: TtyOutput | None) -> None:
        loop.remove_reader(reader.fileno())
        timer.cancel()
        reader.close()
        if not transport.is_closing():
            transport.resume_reading()
        done(output)

    def readable() -> None:
        fds = array.array("i")
        try:
            # CLOEXEC at once: a pane forked meanwhile must not inherit the client's terminal.
            data, ancillary, _flags, _address = reader.recvmsg(1, socket.CMSG_SPACE(fds.itemsize),
                                                               socket.MSG_CMSG_CLOEXEC)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            finish(None)
            return
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        output = None
        for passed in fds:
            try:
                if output is None and data:
                    output = TtyOutput(open_passed_tty(passed))
            except OSError as exc:
                log.info("attach: not writing to the client's terminal: %s", exc)
            finally:
                os.close(passed)
        finish(output)

    loop.add_reader(reader.fileno(), readable)
    timer = loop.call_later(TTY_PASS_TIMEOUT_S, finish, None)
