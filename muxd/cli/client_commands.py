"""CLI commands about attached clients and their keys: list-clients, detach-client, switch-client,
list-keys, bind-key, unbind-key."""

from __future__ import annotations

import argparse
import os

from muxd.cli.format_commands import add_format_options
from muxd.cli.format_lines import client_variables, print_lines
from muxd.cli.render import print_json
from muxd.cli.table import cli_command
from muxd.errors import NotFound
from muxd.formats import expand, is_true

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


# tmux's own line, less its terminal name and flags: "/dev/pts/3: work [100x29]".
CLIENT_LINE = "#{client_name}: #{client_session} [#{client_width}x#{client_height}]"


def _configure_list_clients(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="only the clients of this session")
    p.add_argument("--json", action="store_true")
    add_format_options(p)


@cli_command("list-clients")(_configure_list_clients)
def list_clients(client: Any, args: argparse.Namespace) -> int:
    clients = client.call("list-clients", "client-list", target=args.target).clients
    if args.format is None and args.filter is None:  # muxd's own line, without the sessions' variables
        if args.json:
            print_json(clients)
        else:
            for attached in clients:
                print(f"{attached.name}: {attached.session} [{attached.columns}x{attached.lines}]")
        return 0
    template = CLIENT_LINE if args.format is None else args.format
    variables_of = client_variables(client, template + (args.filter or ""))
    if args.json:
        print_json([c for c in clients if is_true(expand(args.filter or "1", variables_of(c)))])
        return 0
    print_lines(clients, variables_of, template, args.filter)
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


def _configure_switch(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", required=True, help="the session, window or pane to show")
    p.add_argument("-c", dest="client", metavar="CLIENT", help="the client to switch (see list-clients)")


@cli_command("switch-client")(_configure_switch)
def switch_client(client: Any, args: argparse.Namespace) -> int:
    # Typed in a pane, "the current client" is the one showing that pane's session, as in tmux.
    client.call("switch-client", "ok", target=args.target, client=args.client,
                pane=os.environ.get("MUXD_PANE") or None)
    return 0


def _table(args: argparse.Namespace) -> str:
    from muxd.daemon.client_side.key_bindings import TABLES

    table = "root" if getattr(args, "root", False) else args.table
    if table not in TABLES:
        raise NotFound(f"table {table} doesn't exist")
    return table


def _configure_list_keys(p: argparse.ArgumentParser) -> None:
    p.add_argument("-T", dest="table", default="prefix",
                   help="key table: prefix, root (keys bound with -n), copy-mode-vi or copy-mode (emacs)")
    p.add_argument("-N", dest="notes", action="store_true", help="each key with what it does")
    p.add_argument("key", nargs="?", help="only this key's binding")


@cli_command("list-keys")(_configure_list_keys)
def list_keys(client: Any, args: argparse.Namespace) -> int:
    from muxd.cli.key_table import bind_key_lines, note_lines

    table = _table(args)
    shown = client.call("show-options", "option-list", name="prefix", scope="global").options
    prefix = shown[0].value if shown else "C-b"
    user = client.call("list-keys", "key-binding-list")
    if args.notes:
        lines = note_lines(prefix, user, args.key) if table == "prefix" else []
    else:
        lines = bind_key_lines(table, prefix, user, args.key)
    if not lines and args.key is not None:
        raise NotFound(f"unknown key: {args.key}")
    for line in lines:
        print(line)
    return 0


def _configure_bind_key(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", dest="root", action="store_true", help="in the root table: the key alone, no prefix")
    p.add_argument("-T", dest="table", default="prefix",
                   help="key table: prefix (default), root, copy-mode-vi or copy-mode (emacs: `send -X COMMAND`)")
    p.add_argument("-r", dest="repeat", action="store_true",
                   help="the key may repeat: again without the prefix within repeat-time")
    p.add_argument("key", help="a tmux key name: x, C-a, M-Left, F5, |")
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="muxd commands to run, ';' between them (the active pane is the default -t)")


@cli_command("bind-key")(_configure_bind_key)
def bind_key(client: Any, args: argparse.Namespace) -> int:
    import shlex

    from muxd.cli.table import command_named
    from muxd.daemon.client_side.copy_keys import copy_command
    from muxd.daemon.client_side.key_bindings import key_forms
    from muxd.daemon.client_side.prefix_keys import binding_for_command
    from muxd.daemon.core.cli_lines import as_tmux_reads
    from muxd.errors import BadRequest
    from muxd.tmux_line import split_commands

    table = _table(args)
    key_forms(args.key)  # an unknown key name is refused before anything is sent
    commands = [as_tmux_reads(words) for words in split_commands(args.command)]
    if not commands:
        raise BadRequest("a command is needed: bind-key KEY COMMAND [ARGUMENTS]")
    for words in commands:
        if not (binding_for_command(words) or command_named(words[0])):
            raise BadRequest(f"unknown command: {words[0]}")
        copy_command(words)  # `send -X NAME`: a NAME copy mode does not do is refused now
    line = " ; ".join(shlex.join(words) for words in commands)
    client.call("bind-key", "ok", table=table, key=args.key, command=line, repeat=args.repeat)
    return 0


def _configure_unbind_key(p: argparse.ArgumentParser) -> None:
    p.add_argument("-a", dest="all_keys", action="store_true", help="every key of the table")
    p.add_argument("-n", dest="root", action="store_true", help="in the root table")
    p.add_argument("-T", dest="table", default="prefix",
                   help="key table: prefix (default), root, copy-mode-vi or copy-mode")
    p.add_argument("-q", dest="quiet", action="store_true", help="no error for an unknown key")
    p.add_argument("key", nargs="?")


@cli_command("unbind-key")(_configure_unbind_key)
def unbind_key(client: Any, args: argparse.Namespace) -> int:
    from muxd.errors import BadRequest, MuxdError

    table = _table(args)
    if not args.all_keys and args.key is None:
        raise BadRequest("a key is needed: unbind-key [-a] KEY")
    try:
        client.call("bind-key", "ok", table=table, key=args.key, all_keys=args.all_keys)
    except MuxdError:
        if not args.quiet:
            raise
    return 0
