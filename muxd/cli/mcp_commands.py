"""`muxd mcp`: serve MCP for an orchestrating agent, over stdio (Claude Code, Claude Desktop) or HTTP."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from muxd.cli.table import cli_command

ENV_TOKEN = "MUXD_TOKEN"
ENV_PANE = "MUXD_PANE"


def _configure_mcp(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp (bearer muxd token required; port 0 picks one)")
    p.add_argument("--token-file", metavar="FILE",
                   help=f"present the token in FILE (its first line) to the daemon (default: ${ENV_TOKEN}); stdio only")
    p.add_argument("--token", help="the token itself (visible to every user in ps: prefer --token-file or "
                                   f"${ENV_TOKEN}); stdio only")
    p.add_argument("--as-owner", action="store_true",
                   help="inside a muxd pane with no token, serve as the socket's owner (every pane) instead "
                        "of refusing; stdio only")
    p.add_argument("--rate", type=float, metavar="CALLS_PER_S",
                   help="rate limit per principal and tool, calls/s (default 10, env MUXD_MCP_RATE)")
    p.add_argument("--burst", type=int, metavar="N", help="rate limit burst (default 20, env MUXD_MCP_BURST)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="per-call timeout, 1-300 s (default 30, env MUXD_MCP_TIMEOUT_S)")
    p.add_argument("--max-response-bytes", type=int, metavar="BYTES",
                   help="cut tool results above this size, >= 1024 (default 1 MiB, env MUXD_MCP_MAX_RESPONSE_BYTES)")
    p.add_argument("--tools", metavar="CATEGORIES",
                   help="serve only these tool categories, comma-separated: summary, panes, executions, tasks, "
                        "engine (default: all)")


def limits_from_args(args: argparse.Namespace) -> Any:
    """The guard limits: the environment's (or defaults), then the flags; bounds checked (bad_request)."""
    import dataclasses

    from muxd.mcp_server.limits import GuardLimits

    base = GuardLimits.from_env()
    flags = {"rate_per_s": args.rate, "burst": args.burst, "call_timeout_s": args.timeout,
             "response_max_bytes": args.max_response_bytes}
    return dataclasses.replace(base, **{k: v for k, v in flags.items() if v is not None})


def categories_from_args(args: argparse.Namespace) -> frozenset[str] | None:
    """The tool categories of --tools (None: all); bad_request naming an unknown one."""
    from muxd.mcp_server.tool_categories import parse_categories

    return None if args.tools is None else parse_categories(args.tools)


@cli_command("mcp")(_configure_mcp)
def mcp(client: Any, args: argparse.Namespace) -> int:
    # A local command: it never starts a daemon (one nobody has panes in would answer an empty
    # fleet); it serves the user's, and says so when none runs. The SDK is imported only after
    # the stdio front has answered `initialize` (stdio_front.py).
    from muxd.cli.main import chosen_host, chosen_token, server_address

    limits = limits_from_args(args)
    path = server_address(args)  # the socket's path, or a server on another host (-H)
    categories = categories_from_args(args)
    if args.http:
        import asyncio

        from muxd.mcp_server.http_server import serve_http

        if not chosen_host(args):
            _warn_if_no_server(path)
        # Each HTTP request acts as its own bearer token; no connection of this process is used.
        return asyncio.run(serve_http(args.http, socket_path=path, limits=limits, categories=categories))

    from muxd.client.token import argv_token_warning, token_from_env
    from muxd.mcp_server.stdio_front import serve_stdio

    if args.token:
        print(f"muxd mcp: {argv_token_warning(ENV_TOKEN)}", file=sys.stderr, flush=True)
    # --token-file, else --token, else $MUXD_TOKEN (inside a pane: scoped to it), else the CLI's own
    token = token_from_env(args.token, file=args.token_file) or chosen_token(args)
    if token is None and not args.as_owner:
        _refuse_owner_inside_pane(os.environ.get(ENV_PANE) or pane_of_ancestors(path))
    return serve_stdio(path, token, limits, categories=categories)


def _refuse_owner_inside_pane(pane: str | None) -> None:
    """Forbidden when `muxd mcp` runs in a muxd pane without a token: an agent whose CLI did
    not pass the pane's MUXD_TOKEN on (Gemini CLI drops every *TOKEN* variable from an MCP
    server's environment unless allowed) would otherwise drive muxd as the socket's owner,
    every pane included, instead of as its own pane's agent."""
    from muxd.errors import Forbidden

    if pane:
        raise Forbidden(f"mcp in pane {pane} has no ${ENV_TOKEN} and would act as the socket's owner "
                        f"(every pane): let the agent pass {ENV_TOKEN} to its MCP servers (Codex: env_vars in "
                        f"[mcp_servers.…]; Gemini CLI: security.environmentVariableRedaction.allowed), or give "
                        f"--token-file; --as-owner to serve as the owner anyway")


def pane_of_ancestors(socket: str, pid: int | None = None, *, max_depth: int = 64) -> str | None:
    """The pane of `socket`'s server that the nearest ancestor holding `MUXD_PANE` runs in
    (`$MUXD` names a pane's server, as tmux's `$TMUX`). An agent CLI that passes its MCP servers
    only some variables (Codex without `env_vars`, Gemini CLI in a CI job) hides both the token
    and the pane, but the CLI itself, started in the pane, still holds them. Only a pane of the
    server this `muxd mcp` serves counts (a test run inside a pane of the user's own server
    starts servers of its own); another user's process (unreadable) ends the search."""
    current = os.getppid() if pid is None else pid
    for _ in range(max_depth):
        if current <= 1:
            return None
        try:
            with open(f"/proc/{current}/environ", "rb") as environ:
                found = dict(entry.partition(b"=")[::2] for entry in environ.read().split(b"\0") if entry)
            if found.get(b"MUXD_PANE"):
                same_server = found.get(b"MUXD", b"").decode(errors="replace") == socket
                return found[b"MUXD_PANE"].decode(errors="replace") if same_server else None
            with open(f"/proc/{current}/stat", "rb") as stat:
                # "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ")".
                current = int(stat.read().rpartition(b")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    return None


def _warn_if_no_server(path: str) -> None:
    """One line on stderr when no daemon listens at `path` (requests then get 503 until one does)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            print(f"muxd mcp: warning: no muxd server runs at {path}: requests get 503 until one starts",
                  file=sys.stderr, flush=True)
