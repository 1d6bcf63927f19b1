"""CLI commands that create and remove sessions and windows."""

from __future__ import annotations

import argparse

from muxd.cli.attach_commands import add_prefix_option, check_not_nested, chosen_prefix, run_attach
from muxd.cli.new_pane import add_size_options, add_spawn_options, report_new_pane, size_argument, spawn_from_args
from muxd.cli.table import cli_command
from muxd.config import DEFAULT_COLUMNS, DEFAULT_LINES

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_new_session(p: argparse.ArgumentParser) -> None:
    p.add_argument("-d", dest="detached", action="store_true", help="do not attach this terminal")
    p.add_argument("-s", dest="session_name", help="session name")
    p.add_argument("-n", dest="window_name", help="name of the first window")
    p.add_argument("-x", dest="columns", type=int, default=None, help="width")
    p.add_argument("-y", dest="lines", type=int, default=None, help="height")
    add_prefix_option(p)
    add_spawn_options(p)


@cli_command("new-session")(_configure_new_session)
def new_session(client: Any, args: argparse.Namespace) -> int:
    columns, lines = DEFAULT_COLUMNS, DEFAULT_LINES
    if not args.detached:  # check before creating anything, as tmux does; size it to this terminal
        from muxd.client.attach import check_terminal

        size = check_terminal()
        chosen_prefix(args)
        check_not_nested(args)
        columns, lines = size.columns, max(1, size.lines - 1)
    columns = columns if args.columns is None else args.columns
    lines = lines if args.lines is None else args.lines
    # Attached, it is a person's session: its panes close when their programs exit, as in tmux.
    spawn = {**spawn_from_args(args, client), "interactive": not args.detached}
    reply = client.call("new-session", "pane", name=args.session_name, window_name=args.window_name,
                        columns=columns, lines=lines, spawn=spawn)
    report_new_pane(client, args, reply.pane)
    if not args.detached:
        return run_attach(args, reply.pane.session_id)
    return 0


def _configure_new_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session")
    p.add_argument("-n", dest="window_name", help="window name")
    p.add_argument("-d", dest="detached", action="store_true", help="do not make the new window current")
    add_spawn_options(p)


@cli_command("new-window")(_configure_new_window)
def new_window(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("new-window", "pane", target=args.target, name=args.window_name,
                        spawn=spawn_from_args(args, client), detached=args.detached)
    report_new_pane(client, args, reply.pane)
    return 0


def _configure_split_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="pane to split")
    p.add_argument("-h", dest="horizontal", action="store_true", help="side by side (left/right)")
    p.add_argument("-v", dest="vertical", action="store_true", help="stacked (top/bottom; the default)")
    p.add_argument("-b", dest="before", action="store_true", help="the new pane goes left of (above) the target")
    p.add_argument("-f", dest="full", action="store_true", help="the new pane spans the window's height (width)")
    p.add_argument("-d", dest="detached", action="store_true", help="do not make the new pane active")
    add_size_options(p)
    add_spawn_options(p)


@cli_command("split-window")(_configure_split_window)
def split_window(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("split-window", "pane", target=args.target, horizontal=args.horizontal,
                        spawn=spawn_from_args(args, client), detached=args.detached, before=args.before,
                        full=args.full, size=size_argument(args))
    report_new_pane(client, args, reply.pane)
    return 0


def _configure_target(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target")


@cli_command("kill-session")(_configure_target)
def kill_session(client: Any, args: argparse.Namespace) -> int:
    client.call("kill-session", "ok", target=args.target)
    return 0


@cli_command("kill-window")(_configure_target)
def kill_window(client: Any, args: argparse.Namespace) -> int:
    client.call("kill-window", "ok", target=args.target)
    return 0


@cli_command("has-session")(_configure_target)
def has_session(client: Any, args: argparse.Namespace) -> int:
    client.call("has-session", "ok", target=args.target)
    return 0
