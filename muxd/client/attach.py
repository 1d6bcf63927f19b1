"""`muxd attach`: the terminal side of an attached client. Thin on purpose.

Raw mode; keyboard bytes go to the daemon, the daemon's rendered bytes go to the terminal,
SIGWINCH becomes a resize message. The daemon parses keys and renders (daemon/client_side/attached.py).
Whatever happens (detach, the server going away, SIGTERM/SIGHUP, an exception) the terminal
is restored in `finally`; only SIGKILL cannot be caught — then `reset` or the next attach
(which redraws everything) fixes the terminal.
"""

from __future__ import annotations

import asyncio
import os
import signal
import termios
import tty
from collections.abc import Mapping
from pathlib import Path

from muxd.config import ATTACH_INPUT_MAX_BYTES, CLIENT_CONNECT_TIMEOUT_S, LABEL_MAX_CHARS, PROTOCOL_VERSION
from muxd.errors import (
    ConnectionLost, MuxdError, NotATerminal, ProtocolError, ServerNotRunning, error_from_code,
)
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import (
    Attach, Attached, AttachInput, AttachOutput, AttachResize, Detached, Error, Hello, Welcome,
)

READ_CHUNK_BYTES = 64 * 1024
# Undo what the daemon's first frame set up, should the daemon not get to do it itself:
# mouse and paste modes off, keypad/cursor keys normal, SGR reset, cursor shown, main screen.
LEAVE_TERMINAL_FALLBACK = (b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>"
                           b"\x1b[?2026l\x1b[0m\x1b[?25h\x1b[?1049l")


def check_terminal(stdin_fd: int = 0, stdout_fd: int = 1) -> os.terminal_size:
    """The terminal's size; NotATerminal unless both stdin and stdout are terminals."""
    if not (os.isatty(stdin_fd) and os.isatty(stdout_fd)):
        raise NotATerminal("open terminal failed: not a terminal (attach needs one on stdin and stdout)")
    return os.get_terminal_size(stdout_fd)


def _tty_name(fd: int) -> str:
    """The terminal's device, which names this client (detach-client -t /dev/pts/3), as in tmux."""
    try:
        return os.ttyname(fd)
    except OSError:
        return ""


def leave_terminal_bytes() -> bytes:
    try:
        from muxd.attach.paint import leave_terminal_bytes as render_leave
    except ImportError:
        return LEAVE_TERMINAL_FALLBACK
    return render_leave()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            continue
        except InterruptedError:
            continue
        view = view[written:]


class _Link:
    """The framed connection: one reader of whole messages, one writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = FrameDecoder()
        self.queued: list[object] = []

    def send(self, message: object) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(message))

    async def receive(self) -> object:
        while not self.queued:
            data = await self.reader.read(READ_CHUNK_BYTES)
            if not data:
                raise ConnectionLost("lost server")
            self.queued.extend(decode_server_message(body) for body in self.decoder.feed(data))
        return self.queued.pop(0)

    async def reply(self) -> object:
        message = await self.receive()
        if isinstance(message, Error):
            raise error_from_code(message.code, message.message, message.detail)
        return message


async def _open(path: Path, token: str | None) -> _Link:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)),
                                                CLIENT_CONNECT_TIMEOUT_S)
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        raise ServerNotRunning(f"no server running on {path}", socket=str(path)) from exc
    link = _Link(reader, writer)
    link.send(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="muxd-attach", token=token))
    if not isinstance(await link.reply(), Welcome):
        raise ProtocolError("the server did not answer hello")
    return link


async def attach(path: Path, *, target: str | None = None, prefix: str = "C-b", token: str | None = None,
                 stdin_fd: int = 0, stdout_fd: int = 1) -> str:
    """Attach this terminal to a session until detach, greeting with `token` (the CLI's: None is
    the socket owner); returns what to print (e.g. "exited")."""
    size = check_terminal(stdin_fd, stdout_fd)
    link = await _open(path, token)
    try:
        term, program = terminal_kind(os.environ)
        link.send(Attach(id=2, target=target, columns=size.columns, lines=size.lines, prefix=prefix,
                         tty=_tty_name(stdin_fd), term=term, term_program=program))
        attached = await link.reply()
        if not isinstance(attached, Attached):
            raise ProtocolError("the server did not answer attach")
        return await _run_attached(link, stdin_fd, stdout_fd)
    finally:
        link.writer.close()


def terminal_kind(env: Mapping[str, str]) -> tuple[str, str]:
    """($TERM, $TERM_PROGRAM) to tell the daemon which notifications this terminal shows; a VTE
    terminal (GNOME Terminal, Tilix) sets no TERM_PROGRAM but VTE_VERSION: "vte"."""
    program = env.get("TERM_PROGRAM") or ("vte" if env.get("VTE_VERSION") else "")
    return env.get("TERM", "")[:LABEL_MAX_CHARS], program[:LABEL_MAX_CHARS]


async def _run_attached(link: _Link, stdin_fd: int, stdout_fd: int) -> str:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    saved = termios.tcgetattr(stdin_fd)

    def finish(reason: str) -> None:
        if not done.done():
            done.set_result(reason)

    def on_input() -> None:
        try:
            data = os.read(stdin_fd, ATTACH_INPUT_MAX_BYTES)  # a bigger paste goes in several messages
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            finish("terminal closed")
            return
        link.send(AttachInput(data=data))

    def on_resize() -> None:
        try:
            size = os.get_terminal_size(stdout_fd)
        except OSError:
            return
        link.send(AttachResize(columns=size.columns, lines=size.lines))

    async def pump_output() -> None:
        try:
            while True:
                message = await link.receive()
                if isinstance(message, AttachOutput):
                    _write_all(stdout_fd, message.data)
                elif isinstance(message, Detached):
                    finish(message.reason)
                    return
        except (ConnectionLost, ConnectionError, MuxdError):
            finish("lost server")

    handled = (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP)
    try:
        tty.setraw(stdin_fd, termios.TCSANOW)
        loop.add_reader(stdin_fd, on_input)
        loop.add_signal_handler(signal.SIGWINCH, on_resize)
        loop.add_signal_handler(signal.SIGTERM, finish, "terminated")
        loop.add_signal_handler(signal.SIGHUP, finish, "terminal closed")
        pump = asyncio.create_task(pump_output())
        on_resize()  # the size may have changed between the check and raw mode
        try:
            return await done
        finally:
            pump.cancel()
    finally:
        loop.remove_reader(stdin_fd)
        for sig in handled:
            loop.remove_signal_handler(sig)
        try:
            _write_all(stdout_fd, leave_terminal_bytes())
        except OSError:
            pass  # the terminal is gone: nothing left to restore on it
        try:
            termios.tcsetattr(stdin_fd, termios.TCSAFLUSH, saved)
        except termios.error:
            pass
