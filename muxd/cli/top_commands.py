"""`muxd top`: a live view of every agent in every session, those that need you first (waiting,
limited, failed, finished; then at work; then the rest), redrawn as the daemon's events come
(top_live.py). `--once` prints one frame and exits, for scripts and tests.

Keys: ↑/↓ (j/k) select; Enter goes to the agent's pane (inside an attached muxd client, that
client switches to it; else top ends and `muxd attach -t PANE` takes the terminal); y/n answer
its yes/no confirmation; e shows its running (else last) execution; q (or Ctrl-C) quits.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from muxd.cli.top_live import LiveTop


def _configure_top(p: argparse.ArgumentParser) -> None:
    p.add_argument("--once", action="store_true", help="print one frame (every agent) and exit")


@cli_command("top")(_configure_top)
def top(client: None, args: argparse.Namespace) -> int:
    if args.once:
        return asyncio.run(_once(args))
    from muxd.errors import NotATerminal

    if not (os.isatty(0) and os.isatty(1)):
        raise NotATerminal("top needs a terminal on stdin and stdout (--once prints one frame anywhere)")
    attach_to = asyncio.run(_live(args))
    if attach_to is not None:
        _attach(args, attach_to)
    return 0


async def _once(args: argparse.Namespace) -> int:
    from muxd.cli.live_client import connect_live
    from muxd.cli.plain_table import table_width
    from muxd.cli.top_live import once_lines, read_board

    client = await connect_live(args, "muxd-top")
    try:
        panes, executions = await read_board(client)
    finally:
        await client.close()
    terminal = sys.stdout.isatty() and os.environ.get("TERM", "") not in ("dumb", "")
    sys.stdout.write("".join(line + "\n" for line in once_lines(panes, executions, table_width(), color=terminal)))
    return 0


async def _live(args: argparse.Namespace) -> str | None:
    from muxd.cli.live_client import connect_live
    from muxd.cli.top_live import LiveTop
    from muxd.cli.top_terminal import TopTerminal

    view: list[LiveTop] = []  # made once connected; events before it are read with the first frame
    client = await connect_live(args, "muxd-top", on_event=lambda message: view and view[0].heard(message))
    terminal = TopTerminal()
    view.append(LiveTop(client, terminal, inside_pane=_inside_pane(args)))
    terminal.open()
    try:
        return await view[0].run()
    finally:
        terminal.close()
        await client.close()


def _inside_pane(args: argparse.Namespace) -> str | None:
    """The pane top runs in when that pane is one of this server's (its clients can be switched)."""
    from muxd.cli.attach_commands import INSIDE_ENV
    from muxd.paths import socket_path

    from muxd.cli.main import chosen_host

    inside, pane = os.environ.get(INSIDE_ENV), os.environ.get("MUXD_PANE")
    if not inside or not pane or chosen_host(args):
        return None
    return pane if os.path.realpath(inside) == os.path.realpath(socket_path(args.server_name)) else None


def _attach(args: argparse.Namespace, pane_id: str) -> None:
    """Replace top by `muxd attach -t PANE` on the same server, as the same principal."""
    from muxd.cli.main import chosen_token
    from muxd.client.token import ENV_CLI_TOKEN

    env = dict(os.environ)
    token = chosen_token(args, warn=False)
    if token:
        env[ENV_CLI_TOKEN] = token  # not in the new command line, where ps would show it
    sys.stdout.flush()
    host = ["-H", args.host_url] if getattr(args, "host_url", None) else []  # else $MUXD_HOST_URL's, as here
    os.execve(sys.executable, [sys.executable, "-m", "muxd", "-L", args.server_name, *host, "attach", "-t", pane_id],
              env)
