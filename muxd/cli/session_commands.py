"""CLI commands that create and remove sessions and windows."""

from __future__ import annotations

import argparse
import os

from muxd.cli.attach_commands import add_prefix_option, check_not_nested, chosen_prefix, run_attach
from muxd.cli.render import print_json
from muxd.cli.table import cli_command
from muxd.config import DEFAULT_COLUMNS, DEFAULT_LINES
from muxd.errors import BadRequest
from muxd.protocol.msgpack_lite import Record

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def add_spawn_options(parser: argparse.ArgumentParser) -> None:
    """Options every pane-creating command shares: where, with what environment, named how."""
    parser.add_argument("-c", dest="cwd", metavar="DIR", help="working directory of the new pane")
    parser.add_argument("-e", dest="env", metavar="VAR=VALUE", action="append", default=[],
                        help="set an environment variable (repeatable)")
    parser.add_argument("--name", dest="pane_name", help="a unique name for the new pane")
    parser.add_argument("--tag", dest="tags", action="append", default=[], help="tag the pane (repeatable)")
    parser.add_argument("--rm", dest="remove_on_exit", action="store_true",
                        help="remove the pane when its program exits")
    parser.add_argument("-P", dest="print_pane", action="store_true",
                        help="print the new pane's id (or -F's format)")
    parser.add_argument("-F", dest="format", metavar="FORMAT",
                        help="with -P: print this tmux format instead (#{session_name}:#{window_index}.#{pane_index})")
    parser.add_argument("--tmux-shim", dest="tmux_shim", action="store_true",
                        help="its programs see TMUX, and their `tmux` commands drive this muxd (muxd tmux)")
    parser.add_argument("--json", action="store_true", help="print the new pane as JSON")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="program and arguments (after --)")


def spawn_from_args(args: argparse.Namespace, client: Any = None) -> dict[str, Any]:
    """The new pane's Spawn, as the fields the daemon reads it from. With a `client`, a `-c`
    holding a format (tmux configs' `split-window -c '#{pane_current_path}'`) is expanded for
    the pane `-t` names (the active one of a session or window)."""
    cwd = args.cwd
    if client is not None and "#" in (cwd or ""):
        from muxd.cli.format_variables import FormatScope

        pane = client.call("show-pane", "pane", target=getattr(args, "target", None)).pane
        cwd = FormatScope(client).expand_pane(cwd, pane)
    env: dict[str, str] = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadRequest(f"-e wants VAR=VALUE, got {item!r}")
        env[key] = value
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    return {"command": command, "cwd": os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd(), "env": env, "pane_name": args.pane_name, "tags": args.tags,
            "remove_on_exit": args.remove_on_exit, "tmux_shim": getattr(args, "tmux_shim", False)}


def report_new_pane(client: Any, args: argparse.Namespace, pane: Record) -> None:
    if args.json:
        print_json(pane)
    elif args.print_pane and args.format is not None:
        from muxd.cli.format_variables import FormatScope

        print(FormatScope(client).expand_pane(args.format, pane))
    elif args.print_pane:
        print(pane.id)


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
    from muxd.cli.layout_commands import add_size_options

    add_size_options(p)
    add_spawn_options(p)


@cli_command("split-window")(_configure_split_window)
def split_window(client: Any, args: argparse.Namespace) -> int:
    from muxd.cli.layout_commands import size_argument

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
