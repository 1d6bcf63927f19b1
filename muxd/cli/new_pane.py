"""What every pane-creating CLI command shares (new-session, new-window, split-window,
join-pane, break-pane, respawn-pane): the spawn and size options, the Spawn they make, and how
the new pane is reported. Below session_commands and layout_commands, which both use it."""

from __future__ import annotations

import argparse
import os

from muxd.cli.render import print_json
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
        from muxd.daemon.panes.format_variables import FormatScope

        pane = client.call("show-pane", "pane", target=getattr(args, "target", None)).pane
        cwd = FormatScope.of_client(client).expand_pane(cwd, pane)
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
        from muxd.daemon.panes.format_variables import FormatScope

        print(FormatScope.of_client(client).expand_pane(args.format, pane))
    elif args.print_pane:
        print(pane.id)


def add_size_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-l", dest="size", metavar="SIZE", help="the new pane's size: cells, or N%% of the target")
    p.add_argument("-p", dest="percent", type=int, metavar="PERCENT", help="the new pane's size in %% (old tmux)")


def size_argument(args: argparse.Namespace) -> str | None:
    """-l SIZE or -p PERCENT as the daemon reads it ("30", "30%")."""
    return args.size if args.size is not None else None if args.percent is None else f"{args.percent}%"
