"""`muxd web`: the web view's app under uvicorn, in this asyncio loop, until SIGINT/SIGTERM."""

from __future__ import annotations

import sys
from typing import TextIO

from muxd.mcp_server.http_listen import is_loopback, listen, serve_until_signalled
from muxd.web.app import WebSettings, build_app


def web_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


async def serve_web(host: str, port: int, *, socket_path: str, allowed_hosts: tuple[str, ...] = (),
                    err: TextIO = sys.stderr) -> int:
    """Serve the web view on host:port (0: a free port) until SIGINT/SIGTERM; the exit code.
    Prints `muxd web: serving URL` once it listens (tests and scripts read the port from it)."""
    if not is_loopback(host):
        print(f"muxd web: warning: {host} is not a loopback address: the view is reachable from other machines, "
              "and tokens and cookies cross the network in clear text (plain HTTP); prefer ssh -L",
              file=err, flush=True)
    app = build_app(WebSettings(socket_path=socket_path, host=host, allowed_hosts=allowed_hosts))
    sock = listen(host, port)
    try:
        bound_host, bound_port = sock.getsockname()[:2]
        await serve_until_signalled(app, sock, lambda: print(f"muxd web: serving {web_url(bound_host, bound_port)}",
                                                              file=err, flush=True))
    finally:
        sock.close()
    return 0
