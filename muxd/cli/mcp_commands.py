"""`muxd mcp`: serve MCP for an orchestrating agent, over stdio (Claude Code, Claude Desktop) or HTTP."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from muxd.cli.table import cli_command

ENV_TOKEN = "MUXD_TOKEN"


def _configure_mcp(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp (bearer muxd token required; port 0 picks one)")
    p.add_argument("--token-file", metavar="FILE",
                   help=f"present the token in FILE (its first line) to the daemon (default: ${ENV_TOKEN}); stdio only")
    p.add_argument("--token", help="the token itself (visible to every user in ps: prefer --token-file or "
                                   f"${ENV_TOKEN}); stdio only")
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
    # The SDK and asyncio are imported here so that other commands start without them. `client`
    # (main's connection, which started the server if none ran) says where and as whom to connect.
    import asyncio

    limits = limits_from_args(args)
    categories = categories_from_args(args)
    path = client.socket_path
    client.close()
    if args.http:
        from muxd.mcp_server.http_server import serve_http

        # Each HTTP request acts as its own bearer token; no connection of this process is used.
        return asyncio.run(serve_http(args.http, socket_path=path, limits=limits, categories=categories))

    from muxd.client.token import argv_token_warning, token_from_env

    if args.token:
        print(f"muxd mcp: {argv_token_warning(ENV_TOKEN)}", file=sys.stderr, flush=True)
    # --token-file, else --token, else $MUXD_TOKEN (inside a pane: scoped to it), else the CLI's own
    token = token_from_env(args.token, file=args.token_file) or client.token
    return asyncio.run(_serve_stdio(path, token, limits, categories))


async def _serve_stdio(path: str, token: str | None, limits: Any, categories: Any = None) -> int:
    from muxd.client.connection import Client
    from muxd.mcp_server.link import remember_token
    from muxd.mcp_server.server import build_server

    acting = await Client.connect(path, client_name="muxd-mcp", token=token)
    remember_token(acting, token)
    try:
        await build_server(acting, limits, categories).run_stdio_async()
    finally:
        await acting.close()
    return 0
