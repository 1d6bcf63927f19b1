"""Serving an ASGI app over TCP as `muxd mcp --http` and `muxd web` do: the listening socket, and
uvicorn in this asyncio loop until SIGINT or SIGTERM. Free of the MCP SDK: the web view imports it."""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from muxd.errors import MuxdError

LISTEN_BACKLOG = 128
# Open SSE streams would hold a graceful shutdown forever; past this they are cut.
SHUTDOWN_GRACE_S = 3.0


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: the kernel picks one)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise MuxdError(f"cannot listen on {host}:{port}: {exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise MuxdError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


class SignalFreeServer(uvicorn.Server):
    """uvicorn without its own signal handling: `serve_http` installs handlers on the loop, and
    uvicorn would re-raise a caught SIGTERM after shutdown (killing us instead of exiting 0)."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_until_signalled(app: Any, sock: socket.socket, ready: Callable[[], None]) -> None:
    """Serve `app` under uvicorn on the listening `sock` until SIGINT or SIGTERM (then cleanly);
    `ready()` (which says where it serves) once those signals stop it cleanly."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=int(SHUTDOWN_GRACE_S))
    server = SignalFreeServer(config)
    loop = asyncio.get_running_loop()

    def stop() -> None:
        server.should_exit = True

    handled = (signal.SIGINT, signal.SIGTERM)
    for sig in handled:
        loop.add_signal_handler(sig, stop)
    try:
        ready()
        await server.serve(sockets=[sock])
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
