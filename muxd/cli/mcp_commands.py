"""`muxd mcp`: serve MCP over stdio for an orchestrating agent (Claude Code, Claude Desktop)."""

from __future__ import annotations

import argparse
from typing import Any

from muxd.cli.table import cli_command


def _configure_mcp(p: argparse.ArgumentParser) -> None:
    pass


@cli_command("mcp", "serve MCP over stdio: agent summaries and pane control for orchestrators",
             starts_server=True)(_configure_mcp)
async def mcp(client: Any, args: argparse.Namespace) -> int:
    # The SDK is imported here so that other commands start without it.
    from muxd.mcp_server.server import build_server

    await build_server(client).run_stdio_async()
    return 0
