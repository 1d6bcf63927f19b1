"""CLI commands about attached clients and their keys: list-clients, detach-client, list-keys."""

from __future__ import annotations

import argparse
import os

from muxd.cli.render import print_json
from muxd.cli.table import cli_command
from muxd.errors import NotFound

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_list_clients(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="only the clients of this session")
    p.add_argument("--json", action="store_true")


@cli_command("list-clients")(_configure_list_clients)
def list_clients(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("list-clients", "client-list", target=args.target)
    if args.json:
        print_json(reply.clients)
        return 0
    for attached in reply.clients:  # tmux's own line: "/dev/pts/3: work [100x29]"
        print(f"{attached.name}: {attached.session} [{attached.columns}x{attached.lines}]")
    return 0


def _configure_detach(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="client", metavar="CLIENT", help="the client to detach (see list-clients)")
    p.add_argument("-s", dest="session", metavar="SESSION", help="detach every client of this session")
    p.add_argument("-a", dest="all_others", action="store_true",
                   help="detach every client but the current one (or the one -t names)")


@cli_command("detach-client")(_configure_detach)
def detach_client(client: Any, args: argparse.Namespace) -> int:
    # Typed in a pane, "the current client" is the one showing that pane's session, as in tmux.
    client.call("detach-client", "ok", client=args.client, session=args.session, all_others=args.all_others,
                pane=os.environ.get("MUXD_PANE") or None)
    return 0


def _configure_list_keys(p: argparse.ArgumentParser) -> None:
    p.add_argument("-T", dest="table", default="prefix", help="key table (muxd has one: prefix)")
    p.add_argument("-N", dest="notes", action="store_true", help="each key with what it does")
    p.add_argument("key", nargs="?", help="only this key's binding")


@cli_command("list-keys")(_configure_list_keys)
def list_keys(client: Any, args: argparse.Namespace) -> int:
    from muxd.cli.key_table import bind_key_lines, note_lines

    if args.table != "prefix":
        raise NotFound(f"table {args.table} doesn't exist")
    shown = client.call("show-options", "option-list", name="prefix", scope="global").options
    prefix = shown[0].value if shown else "C-b"
    lines = note_lines(prefix, args.key) if args.notes else bind_key_lines(prefix, args.key)
    if not lines:
        raise NotFound(f"unknown key: {args.key}")
    for line in lines:
        print(line)
    return 0
