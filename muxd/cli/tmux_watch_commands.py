"""`muxd tmux …`: `watch` and `unwatch` adopt and let go the panes of a running tmux server;
any other tmux command line goes to the tmux shim, `muxd.cli.tmux_commands.run_tmux(argv)`.

    muxd tmux watch [-L SOCKET | -S PATH] [-t TARGET]     (tmux's own `-L`/`-S` may come first:
    muxd tmux unwatch [-L SOCKET | -S PATH] [-t TARGET]    `muxd tmux -L work watch`)
"""

from __future__ import annotations

import argparse
from importlib import import_module

from muxd.cli.render import print_json, print_panes
from muxd.cli.table import cli_command
from muxd.errors import BadRequest

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

WATCH_ACTIONS = ("watch", "unwatch")


def _configure(p: argparse.ArgumentParser) -> None:
    # tmux's server options before the command (`muxd tmux -L work watch`): a REMAINDER cannot
    # start with an option, so argparse takes them and tmux_argv puts them back in front.
    p.add_argument("-L", dest="tmux_socket_name", metavar="SOCKET", help="tmux's socket name")
    p.add_argument("-S", dest="tmux_socket_path", metavar="PATH", help="tmux's socket path")
    p.add_argument("tmux_args", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="watch|unwatch [-L SOCKET | -S PATH] [-t TARGET], or a tmux command line")


def tmux_argv(args: argparse.Namespace) -> list[str]:
    """The tmux command line given after `muxd tmux`, its leading -L/-S included."""
    leading = (["-L", args.tmux_socket_name] if args.tmux_socket_name else []) + \
        (["-S", args.tmux_socket_path] if args.tmux_socket_path else [])
    return leading + list(args.tmux_args)


def split_watch(argv: list[str]) -> tuple[str, list[str]] | None:
    """(action, its options) when `argv` is a watch or unwatch, tmux's -L/-S before it allowed."""
    leading: list[str] = []
    words = list(argv)
    while len(words) >= 2 and words[0] in ("-L", "-S"):
        leading += words[:2]
        del words[:2]
    if words and words[0] in WATCH_ACTIONS:
        return words[0], leading + words[1:]
    return None


def _watch_parser(action: str) -> argparse.ArgumentParser:
    what = "adopt the panes of a running tmux server" if action == "watch" else \
        "let adopted tmux panes go (the tmux panes run on)"
    p = argparse.ArgumentParser(prog=f"muxd tmux {action}", description=what)
    server = p.add_mutually_exclusive_group()
    server.add_argument("-L", dest="socket_name", metavar="SOCKET", help="tmux's socket name (tmux -L)")
    server.add_argument("-S", dest="socket_path", metavar="PATH", help="tmux's socket path (tmux -S)")
    p.add_argument("-t", dest="target", metavar="TARGET",
                   help="a tmux session, window or pane (default: the whole server)")
    if action == "watch":
        p.add_argument("--json", action="store_true", help="the adopted panes as JSON")
    return p


@cli_command("tmux")(_configure)
def tmux(_client: Any, args: argparse.Namespace) -> int:
    argv = tmux_argv(args)
    watch = split_watch(argv)
    if watch is None:
        try:
            shim = import_module("muxd.cli.tmux_commands")
        except ModuleNotFoundError:
            command = " ".join(["tmux", *argv[:1]])
            raise BadRequest(f"{command}: this muxd knows only tmux watch and tmux unwatch") from None
        return int(shim.run_tmux(argv))
    action, rest = watch
    options = _watch_parser(action).parse_args(rest)
    from muxd.cli.main import connect_cli

    fields = {"socket_name": options.socket_name, "socket_path": options.socket_path,
              "tmux_target": options.target}
    with connect_cli(args, start=action == "watch") as client:
        if action == "unwatch":
            client.call("tmux-unwatch", "released", **fields)
            return 0
        reply = client.call("tmux-watch", "pane-list", **fields)
    if options.json:
        print_json(reply.panes)
    else:
        print_panes(reply.panes)
    return 0
