"""`muxd web`: a web view of the agents on a loopback port (muxd/web/), for a browser on this
machine or, through `ssh -L PORT:localhost:PORT host`, on another one."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from muxd.cli.table import cli_command

DEFAULT_PORT = 8766  # beside muxd mcp --http's usual 8765


def _configure_web(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"TCP port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; use ssh -L from elsewhere)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also answer requests that name this host (the Host a browser sends when --host is not "
                        "loopback: its name or address); repeatable")


@cli_command("web")(_configure_web)
def web(client: Any, args: argparse.Namespace) -> int:
    # A local command, as `muxd mcp`: it never starts a daemon; each browser logs in with a token.
    from muxd.cli.main import server_address
    from muxd.errors import BadRequest
    from muxd.web.server import serve_web

    if not 0 <= args.port <= 65535:
        raise BadRequest(f"--port must be 0-65535, got {args.port}", field="port")
    return asyncio.run(serve_web(args.host, args.port, socket_path=server_address(args),
                                 allowed_hosts=tuple(args.allow_host)))
