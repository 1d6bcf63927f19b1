"""`muxd proxy`: the remote half of `muxd -H ssh://…` (client/remote.py), run by ssh on the host.

It connects to the socket of the server `-L` names, as this user (whom the server's peer-uid
check sees: the ssh login's), starting the server first with --start, as the command on the
other end would have; says `ready` (or `error CODE MESSAGE`) in one line; then relays bytes
both ways until either side ends. It never reads what it relays: the client greets the server
itself, token and all.
"""

from __future__ import annotations

import argparse
import os
import _socket
import sys
import threading

from muxd.cli.table import cli_command
from muxd.client.dial import dial
from muxd.errors import MuxdError, ServerNotRunning
from muxd.socket_names import PROXY_READY, SOCKET_DIR_REMEDY, ensure_private_dir, socket_file, split_path

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

RELAY_CHUNK_BYTES = 256 * 1024


def _configure_proxy(p: argparse.ArgumentParser) -> None:
    p.add_argument("--start", action="store_true", help="start the server if none runs")


@cli_command("proxy")(_configure_proxy)
def proxy(client: Any, args: argparse.Namespace) -> int:
    out = sys.stdout.buffer.fileno()
    try:
        server = _connect(args.server_name, start=args.start)
    except MuxdError as exc:
        _write_all(out, f"error {exc.code} {' '.join(exc.message.split())}\n".encode())
        return 1
    try:
        _write_all(out, PROXY_READY + b"\n")
        threading.Thread(target=_to_server, args=(sys.stdin.buffer.fileno(), server), daemon=True).start()
        while data := server.recv(RELAY_CHUNK_BYTES):
            _write_all(out, data)
    except ConnectionError:
        pass  # the server went (as its end), or ssh did
    finally:
        server.close()
    return 0


def _connect(name: str, *, start: bool) -> _socket.socket:
    path = socket_file(name)  # as blocking.connect finds it (socket_names: no pathlib)
    # A socket found in a directory others can write to may be anyone's (paths.ensure_socket_dir).
    ensure_private_dir(split_path(path)[0], SOCKET_DIR_REMEDY)
    try:
        return dial(path)
    except ServerNotRunning:
        if not start:
            raise
    from muxd.client.autostart import start_unless_running

    start_unless_running(name)
    return dial(path)


def _to_server(fd: int, server: _socket.socket) -> None:
    """The client's bytes to the server; at their end, the server hears it (and closes its side)."""
    try:
        while data := os.read(fd, RELAY_CHUNK_BYTES):
            server.sendall(data)
        server.shutdown(_socket.SHUT_WR)
    except OSError:
        pass  # the server went: the main thread's read ends too


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
