"""`muxd attach` (alias `a`), and the attach that ends `muxd new` without -d and a bare `muxd`."""

from __future__ import annotations

import argparse
import os
import sys

from muxd.cli.render import print_line
from muxd.cli.table import cli_command
from muxd.config import DEFAULT_PREFIX
from muxd.paths import socket_path

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

PREFIX_ENV = "MUXD_PREFIX"
INSIDE_ENV = "MUXD"  # the socket of the server whose pane we run in (tmux's $TMUX)


def add_prefix_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", default=None, metavar="KEY",
                   help=f"prefix key, e.g. C-a (default ${PREFIX_ENV}, else the prefix option: {DEFAULT_PREFIX})")


def chosen_prefix(args: argparse.Namespace) -> str:
    """The prefix key name from --prefix, then $MUXD_PREFIX, checked before anything runs; "" when
    neither chose one: the daemon then uses the session's prefix option (C-b unless set)."""
    from muxd.daemon.client_side.prefix_keys import prefix_bytes  # the key tables: only for commands that attach

    prefix = getattr(args, "prefix", None) or os.environ.get(PREFIX_ENV) or ""
    if prefix:
        prefix_bytes(prefix)  # raises BadRequest for a name that is no key
    return prefix


def check_not_nested(args: argparse.Namespace) -> None:
    """Refuse to attach from inside a pane of the very server attached to, as tmux does (the
    client would show itself, key by key); other servers are fine. Unsetting $MUXD forces it."""
    from muxd.cli.main import chosen_host
    from muxd.errors import Conflict

    inside = os.environ.get(INSIDE_ENV)  # a pane of this host's server: one on another host is not it
    if inside and not chosen_host(args) and os.path.realpath(inside) == os.path.realpath(
            socket_path(args.server_name)):
        raise Conflict(f"sessions should be nested with care, unset ${INSIDE_ENV} to force")


def run_attach(args: argparse.Namespace, target: str | None) -> int:
    """Attach this terminal to `target` until it detaches, and print why it ended, as tmux does
    ("[exited]")."""
    from muxd.cli.main import chosen_token, server_address
    from muxd.client.attach import attach

    # The token the command's own connection presented (which said the --token warning): an
    # attached terminal types keys and runs prefix commands, so it is held to the same tier.
    reason = attach(server_address(args), target=target, prefix=chosen_prefix(args),
                    token=chosen_token(args, warn=False))
    print_line(f"[{reason}]")
    sys.stdout.flush()
    return 0


def _configure_attach(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session (default: the most recent)")
    add_prefix_option(p)


@cli_command("attach-session")(_configure_attach)
def attach_session(client: Any, args: argparse.Namespace) -> int:
    from muxd.client.attach import check_terminal

    check_terminal()
    chosen_prefix(args)
    check_not_nested(args)
    return run_attach(args, args.target)
