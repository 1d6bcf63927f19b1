"""A socket to a server: its local socket, or one on another host through ssh (client/remote.py).
What the blocking client, attach and `muxd proxy` connect with; it imports no more than a tmux
shim call's connection does, ssh's modules only for a remote server."""

from __future__ import annotations

# The C socket module: `socket`'s Python wrapper adds selectors and enums (~1 ms to import) to
# what one request needs (connect, sendall, recv).
import _socket

from muxd.config import CLIENT_CONNECT_TIMEOUT_S
from muxd.errors import ServerNotRunning
from muxd.socket_names import REMOTE_SCHEME


def dial(address: str, *, start: bool = False, timeout_s: float = CLIENT_CONNECT_TIMEOUT_S) -> _socket.socket:
    """A blocking socket connected to the server at `address` (a socket's path, or a host_address)
    within `timeout_s` (a remote one: as long as ssh takes); ServerNotRunning when none listens
    there. `start`: a remote server is started if none runs (a local one, blocking.connect starts)."""
    if address.startswith(REMOTE_SCHEME):
        from muxd.client.remote import open_remote  # subprocess and urllib: only for a remote server

        return open_remote(address, start=start)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_s)
        sock.connect(address)
    except OSError as exc:
        sock.close()
        if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
            raise ServerNotRunning(f"no server running on {address}", socket=address) from exc
        why = "permission denied" if isinstance(exc, PermissionError) else exc.strerror or str(exc)
        raise ServerNotRunning(f"cannot reach {address}: {why}", socket=address) from exc
    sock.settimeout(None)
    return sock
