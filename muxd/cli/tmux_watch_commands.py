"""`muxd tmux watch` and `muxd tmux unwatch`: adopt, and let go, the panes of a running tmux
server (daemon/tmux/watch.py). The tmux shim's front end (cli/tmux_commands.py) hands these
two words to `watch_main`; every other `muxd tmux` line is a tmux command line.

    muxd tmux watch [-L SOCKET | -S PATH] [-t TARGET] [--json]
    muxd tmux unwatch [-L SOCKET | -S PATH] [-t TARGET]

Their -L/-S name the tmux server to watch (the muxd server is muxd's own -L, or the shim's).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from contextlib import ExitStack

from muxd.cli.render import print_json, print_panes

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

WATCH_ACTIONS = ("watch", "unwatch")


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


def run_watch(words: list[str], client_for: Callable[[bool], Any]) -> int:
    """Run `watch …` or `unwatch …` (`words[0]`); `client_for(start)` gives a client of the muxd
    server (`start`: start one if none runs), which the caller closes."""
    action = words[0]
    options = _watch_parser(action).parse_args(words[1:])
    fields = {"socket_name": options.socket_name, "socket_path": options.socket_path,
              "tmux_target": options.target}
    if action == "unwatch":
        client_for(False).call("tmux-unwatch", "released", **fields)
        return 0
    reply = client_for(True).call("tmux-watch", "pane-list", **fields)
    if options.json:
        print_json(reply.panes)
    else:
        print_panes(reply.panes)
    return 0


def watch_main(words: list[str], args: argparse.Namespace) -> int:
    """`muxd tmux watch|unwatch …` (`words`) on the muxd server `args` names (muxd's -L and
    token options; those missing mean the default server, the token in $MUXD_CLI_TOKEN)."""
    from muxd.cli.main import connect_cli

    with ExitStack() as stack:
        return run_watch(words, lambda start: stack.enter_context(connect_cli(args, start=start)))
