"""`muxd attach` (alias `a`), and the attach that ends `muxd new` without -d and a bare `muxd`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from muxd.cli.render import print_line
from muxd.cli.table import cli_command
from muxd.daemon.prefix_keys import DEFAULT_PREFIX, prefix_bytes
from muxd.paths import socket_path

PREFIX_ENV = "MUXD_PREFIX"


def add_prefix_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", default=None, metavar="KEY",
                   help=f"prefix key, e.g. C-a (default ${PREFIX_ENV} or {DEFAULT_PREFIX})")


def chosen_prefix(args: argparse.Namespace) -> str:
    """The prefix key name from --prefix, then $MUXD_PREFIX, then C-b; checked before anything runs."""
    prefix = getattr(args, "prefix", None) or os.environ.get(PREFIX_ENV) or DEFAULT_PREFIX
    prefix_bytes(prefix)  # raises BadRequest for a name that is no key
    return prefix


async def attach_terminal(args: argparse.Namespace, target: str | None) -> int:
    """Attach this terminal to `target` and print why it ended, as tmux does ("[exited]")."""
    from muxd.client.attach import attach

    reason = await attach(socket_path(args.server_name), target=target, prefix=chosen_prefix(args))
    print_line(f"[{reason}]")
    sys.stdout.flush()
    return 0


def _configure_attach(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session (default: the most recent)")
    add_prefix_option(p)


@cli_command("attach-session", "attach this terminal to a session", aliases=("attach", "a"),
             local=True)(_configure_attach)
async def attach_session(client: Any, args: argparse.Namespace) -> int:
    from muxd.client.attach import check_terminal

    check_terminal()
    chosen_prefix(args)
    return await attach_terminal(args, args.target)
