"""`muxd attach`: the terminal side of an attached client. Thin on purpose.

Raw mode; keyboard bytes go to the daemon, the daemon's rendered bytes go to the terminal,
SIGWINCH becomes a resize message. The daemon parses keys and renders (daemon/client_side/attached.py).
Whatever happens (detach, the server going away, SIGTERM/SIGHUP, an exception) the terminal
is restored in `finally`; only SIGKILL cannot be caught — then `reset` or the next attach
(which redraws everything) fixes the terminal.

One poll loop over the terminal, the socket and a signal pipe, no event loop: a key is on the
socket and a frame on the terminal within one wakeup each, with a few system calls and little
Python in between (a keystroke's echo crosses this process twice).
"""

from __future__ import annotations

import array
import gc
import os
import select
import signal
import socket
import termios
import tty
from collections.abc import Mapping
from pathlib import Path

from muxd.client.dial import dial
from muxd.config import ATTACH_INPUT_MAX_BYTES, LABEL_MAX_CHARS, PROTOCOL_VERSION
from muxd.errors import (
    ConnectionLost, MuxdError, NotATerminal, ProtocolError, error_from_code,
)
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.socket_names import REMOTE_SCHEME
from muxd.protocol.messages import (
    Attach, Attached, AttachInput, AttachOutput, AttachResize, Detached, Error, Hello, Welcome,
)

READ_CHUNK_BYTES = 256 * 1024
# Keys not yet taken by the socket (a big paste into a daemon that waits for its pane): the
# terminal is not read beyond this until they go, so a paste never grows this process unbounded.
SEND_BACKLOG_MAX_BYTES = 1024 * 1024
# Undo what the daemon's first frame set up, should the daemon not get to do it itself:
# mouse and paste modes off, keypad/cursor keys normal, SGR reset, cursor shown, main screen.
LEAVE_TERMINAL_FALLBACK = (b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>"
                           b"\x1b[?2026l\x1b[0m\x1b[?25h\x1b[?1049l")
# How long an ending client waits for the daemon to stop writing to its terminal.
LEAVE_WAIT_MS = 2000
_HANDLED_SIGNALS = (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP)
_ENDING_SIGNALS: dict[int, str] = {signal.SIGTERM: "terminated", signal.SIGHUP: "terminal closed"}
_READABLE = select.POLLIN | select.POLLPRI
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


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
    """The framed connection: whole messages in, messages out through a send backlog that
    never blocks the loop (the daemon stops reading us while we do not read it)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.decoder = FrameDecoder()
        self.queued: list[object] = []
        self.unsent = bytearray()
        # Read into one buffer kept for the whole attach: a fresh 256 KiB object for each frame
        # was an mmap, an mremap and an munmap a frame.
        self._chunk = memoryview(bytearray(READ_CHUNK_BYTES))

    def send(self, message: object) -> None:
        self.unsent += encode(message)
        self.flush()

    def flush(self) -> None:
        """Send what the socket takes now; the rest waits for the loop's next chance."""
        while self.unsent:
            try:
                sent = self.sock.send(self.unsent)
            except (BlockingIOError, InterruptedError):
                return
            del self.unsent[:sent]

    def read(self) -> list[object]:
        """The messages completed by what the socket holds now (ConnectionLost at its end)."""
        try:
            size = self.sock.recv_into(self._chunk)
        except (BlockingIOError, InterruptedError):
            return []
        if not size:
            raise ConnectionLost("lost server")
        return [decode_server_message(body) for body in self.decoder.feed(self._chunk[:size])]

    def reply(self) -> object:
        """The next message, waiting for it (the greeting and the attach, before raw mode)."""
        while not self.queued:
            self.flush()
            events = select.POLLIN | (select.POLLOUT if self.unsent else 0)
            poller = select.poll()
            poller.register(self.sock, events)
            poller.poll()  # as long as the daemon takes: a loaded one may take a while to attach
            self.queued.extend(self.read())
        message = self.queued.pop(0)
        if isinstance(message, Error):
            raise error_from_code(message.code, message.message, message.detail)
        return message


def _open(path: Path | str, token: str | None) -> _Link:
    sock = dial(os.fspath(path))
    sock.setblocking(False)
    link = _Link(sock)
    link.send(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="muxd-attach", token=token))
    if not isinstance(link.reply(), Welcome):
        sock.close()
        raise ProtocolError("the server did not answer hello")
    return link


def attach(path: Path | str, *, target: str | None = None, prefix: str = "C-b", token: str | None = None,
           stdin_fd: int = 0, stdout_fd: int = 1) -> str:
    """Attach this terminal to a session until detach, greeting with `token` (the CLI's: None is
    the socket owner); returns what to print (e.g. "exited")."""
    size = check_terminal(stdin_fd, stdout_fd)
    link = _open(path, token)
    try:
        term, program = terminal_kind(os.environ)
        direct = direct_wanted(os.fspath(path), os.environ)
        link.send(Attach(id=2, target=target, columns=size.columns, lines=size.lines, prefix=prefix,
                         tty=_tty_name(stdin_fd), term=term, term_program=program, direct=direct))
        attached = link.reply()
        if not isinstance(attached, Attached):
            raise ProtocolError("the server did not answer attach")
        if attached.direct:
            _pass_terminal(link.sock, stdout_fd)
        return _AttachedTerminal(link, stdin_fd, stdout_fd, direct=attached.direct).run()
    finally:
        link.sock.close()


def direct_wanted(address: str, env: Mapping[str, str]) -> bool:
    """Whether to pass the terminal for the daemon to write its frames to (as tmux's clients do):
    not through ssh (a socket bridged by a process cannot carry it), not with MUXD_ATTACH_DIRECT=0."""
    return not address.startswith(REMOTE_SCHEME) and env.get("MUXD_ATTACH_DIRECT", "1") != "0"


def _pass_terminal(sock: socket.socket, fd: int) -> None:
    """One byte carrying the terminal's descriptor (SCM_RIGHTS): the daemon reads it alone."""
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]
    while True:
        try:
            if sock.sendmsg([b"\0"], rights):
                return
        except (BlockingIOError, InterruptedError):
            pass
        select.select([], [sock], [])


def terminal_kind(env: Mapping[str, str]) -> tuple[str, str]:
    """($TERM, $TERM_PROGRAM) to tell the daemon which notifications this terminal shows; a VTE
    terminal (GNOME Terminal, Tilix) sets no TERM_PROGRAM but VTE_VERSION: "vte"."""
    program = env.get("TERM_PROGRAM") or ("vte" if env.get("VTE_VERSION") else "")
    return env.get("TERM", "")[:LABEL_MAX_CHARS], program[:LABEL_MAX_CHARS]


class _AttachedTerminal:
    """The loop of an attached terminal: keys to the socket, frames to the terminal, signals
    (through a pipe, so that poll wakes for them) to a resize or the end."""

    def __init__(self, link: _Link, stdin_fd: int, stdout_fd: int, *, direct: bool = False) -> None:
        self.link, self.stdin_fd, self.stdout_fd = link, stdin_fd, stdout_fd
        self.direct = direct  # the daemon writes to the terminal itself
        self.reason: str | None = None
        self.told = False  # the daemon said why it ends (Detached): it writes no more
        self.signals: list[int] = []

    def run(self) -> str:
        saved = termios.tcgetattr(self.stdin_fd)
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        previous = {sig: signal.getsignal(sig) for sig in _HANDLED_SIGNALS}
        old_wakeup = -1
        # The loop makes no reference cycles: no collector pass (a tenth of a millisecond and
        # more on a busy machine) lands between a key and its echo.
        collecting = gc.isenabled()
        gc.disable()
        try:
            tty.setraw(self.stdin_fd, termios.TCSANOW)
            for sig in _HANDLED_SIGNALS:
                signal.signal(sig, self._on_signal)
            old_wakeup = signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
            self._resize()  # the size may have changed between the check and raw mode
            queued, self.link.queued = self.link.queued, []
            self._show(queued)  # what came with the attach's reply (the first frame)
            reason = self._loop(wake_read)
            self._leave()
            return reason
        finally:
            if collecting:
                gc.enable()
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.close(wake_read)
            os.close(wake_write)
            try:
                _write_all(self.stdout_fd, leave_terminal_bytes())
            except OSError:
                pass  # the terminal is gone: nothing left to restore on it
            try:
                termios.tcsetattr(self.stdin_fd, termios.TCSAFLUSH, saved)
            except termios.error:
                pass

    def _leave(self) -> None:
        """Ending on its own (a signal, the terminal closed) while the daemon writes to the
        terminal: the daemon must stop before the terminal is restored. Half-closing the socket
        ends the attach there; the daemon closes its descriptor of the terminal, then the
        connection, whose end is awaited here (a while at most: a daemon that hangs loses)."""
        if not self.direct or self.told or self.reason == "lost server":
            return
        sock = self.link.sock
        try:
            sock.shutdown(socket.SHUT_WR)
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            while poller.poll(LEAVE_WAIT_MS):
                self.link.read()  # up to the end: ConnectionLost
        except (ConnectionLost, ConnectionError, MuxdError, OSError):
            pass

    def _on_signal(self, signum: int, frame: object) -> None:
        self.signals.append(signum)  # acted on by the loop, which the wakeup pipe wakes

    def _loop(self, wake_read: int) -> str:
        link, stdin_fd = self.link, self.stdin_fd
        sock_fd = link.sock.fileno()
        poller = select.poll()
        poller.register(wake_read, select.POLLIN)
        keys_registered: bool | None = None
        socket_events = 0
        while self.reason is None:
            keys_wanted = len(link.unsent) < SEND_BACKLOG_MAX_BYTES
            if keys_wanted != keys_registered:
                if keys_wanted:
                    poller.register(stdin_fd, select.POLLIN)
                else:
                    poller.unregister(stdin_fd)
                keys_registered = keys_wanted
            wanted = select.POLLIN | (select.POLLOUT if link.unsent else 0)
            if wanted != socket_events:
                poller.register(sock_fd, wanted)
                socket_events = wanted
            for fd, events in poller.poll():
                if fd == sock_fd:
                    self._on_socket(events)
                elif fd == stdin_fd:
                    self._on_keys(events)
                elif fd == wake_read:
                    os.read(wake_read, 64)
                if self.reason is not None:
                    break
            self._on_signals()
        return self.reason

    def _finish(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def _on_keys(self, events: int) -> None:
        try:
            data = os.read(self.stdin_fd, ATTACH_INPUT_MAX_BYTES)  # a bigger paste goes in several messages
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._finish("terminal closed")
            return
        self._send(AttachInput(data=data))

    def _on_socket(self, events: int) -> None:
        link = self.link
        try:
            if events & select.POLLOUT:
                link.flush()
            if events & (_READABLE | _GONE):
                self._show(link.read())
        except (ConnectionLost, ConnectionError, MuxdError):
            self._finish("lost server")

    def _show(self, messages: list[object]) -> None:
        for message in messages:
            if isinstance(message, AttachOutput):
                _write_all(self.stdout_fd, message.data)
            elif isinstance(message, Detached):
                self.told = True
                self._finish(message.reason)
                return

    def _send(self, message: object) -> None:
        try:
            self.link.send(message)
        except (ConnectionError, OSError):
            self._finish("lost server")

    def _on_signals(self) -> None:
        while self.signals:
            signum = self.signals.pop(0)
            if signum == signal.SIGWINCH:
                self._resize()
            else:
                self._finish(_ENDING_SIGNALS[signum])

    def _resize(self) -> None:
        try:
            size = os.get_terminal_size(self.stdout_fd)
        except OSError:
            return
        self._send(AttachResize(columns=size.columns, lines=size.lines))
