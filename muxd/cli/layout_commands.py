"""CLI commands that arrange panes: select-layout, swap-pane, join-pane, break-pane, respawn-pane.
Flags are tmux's (the `muxd tmux` shim forwards tmux command lines to them)."""

from __future__ import annotations

import argparse

from muxd.cli.new_pane import add_size_options, report_new_pane, size_argument, spawn_from_args
from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

LAYOUT_NAMES = "even-horizontal, even-vertical, main-horizontal, main-vertical, tiled"


def _configure_select_layout(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="a pane of the window (-E spreads the split around it)")
    p.add_argument("-n", dest="next", action="store_true", help="the next layout")
    p.add_argument("-p", dest="previous", action="store_true", help="the previous layout")
    p.add_argument("-E", dest="spread", action="store_true", help="spread the panes around the target evenly")
    p.add_argument("-o", dest="undo", action="store_true", help="back to the layout before the last select-layout")
    p.add_argument("layout", nargs="?",
                   help=f"{LAYOUT_NAMES} (or a start of one), or a tmux layout string; none: the last again")


@cli_command("select-layout")(_configure_select_layout)
def select_layout(client: Any, args: argparse.Namespace) -> int:
    client.call("select-layout", "ok", target=args.target, layout=args.layout, next=args.next,
                previous=args.previous, spread=args.spread, undo=args.undo)
    return 0


def _configure_step_layout(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target window")


@cli_command("next-layout")(_configure_step_layout)
def next_layout(client: Any, args: argparse.Namespace) -> int:
    client.call("select-layout", "ok", target=args.target, next=True)
    return 0


@cli_command("previous-layout")(_configure_step_layout)
def previous_layout(client: Any, args: argparse.Namespace) -> int:
    client.call("select-layout", "ok", target=args.target, previous=True)
    return 0


def _configure_swap_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", dest="source", help="source pane (default: the target window's active pane)")
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-U", dest="up", action="store_true", help="swap the target with the pane before it")
    p.add_argument("-D", dest="down", action="store_true", help="swap the target with the pane after it")
    p.add_argument("-d", dest="detached", action="store_true", help="the active pane stays where it is")


@cli_command("swap-pane")(_configure_swap_pane)
def swap_pane(client: Any, args: argparse.Namespace) -> int:
    client.call("swap-pane", "ok", target=args.target, source=args.source, up=args.up, down=args.down,
                detached=args.detached)
    return 0


def _configure_join_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", dest="source", help="the pane to move (default: the current pane)")
    p.add_argument("-t", dest="target", help="the pane to split for it")
    p.add_argument("-h", dest="horizontal", action="store_true", help="side by side (left/right)")
    p.add_argument("-v", dest="vertical", action="store_true", help="stacked (top/bottom; the default)")
    p.add_argument("-b", dest="before", action="store_true", help="left of (above) the target")
    p.add_argument("-f", dest="full", action="store_true", help="span the window's height (width)")
    p.add_argument("-d", dest="detached", action="store_true", help="do not make the moved pane active")
    add_size_options(p)


@cli_command("join-pane")(_configure_join_pane)
def join_pane(client: Any, args: argparse.Namespace) -> int:
    client.call("join-pane", "ok", target=args.target, source=args.source, horizontal=args.horizontal,
                before=args.before, full=args.full, size=size_argument(args), detached=args.detached)
    return 0


def _configure_break_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", dest="source", help="the pane to break out (default: the current pane)")
    p.add_argument("-t", dest="target", help="session (or session:index) of the new window")
    p.add_argument("-n", dest="window_name", help="the new window's name")
    p.add_argument("-d", dest="detached", action="store_true", help="do not make the new window current")
    p.add_argument("--json", action="store_true", help="print the pane as JSON")
    p.add_argument("-P", dest="print_pane", action="store_true", help="print the pane's id (or -F's format)")
    p.add_argument("-F", dest="format", metavar="FORMAT", help="with -P: print this tmux format instead")


@cli_command("break-pane")(_configure_break_pane)
def break_pane(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("break-pane", "pane", target=args.source, session=args.target, name=args.window_name,
                        detached=args.detached)
    report_new_pane(client, args, reply.pane)
    return 0


def _configure_respawn_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-k", dest="kill", action="store_true", help="kill the program if it still runs")
    p.add_argument("-c", dest="cwd", metavar="DIR", help="working directory (default: the pane's)")
    p.add_argument("-e", dest="env", metavar="VAR=VALUE", action="append", default=[],
                   help="set an environment variable (repeatable)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="program and arguments (default: the pane's own)")


@cli_command("respawn-pane")(_configure_respawn_pane)
def respawn_pane(client: Any, args: argparse.Namespace) -> int:
    spawn = spawn_from_args(argparse.Namespace(pane_name=None, tags=[], remove_on_exit=False, **vars(args)), client)
    if not args.cwd:
        del spawn["cwd"]  # the pane's own directory, as tmux
    for unused in ("pane_name", "tags", "remove_on_exit"):
        del spawn[unused]
    client.call("respawn-pane", "pane", target=args.target, kill=args.kill, spawn=spawn)
    return 0
