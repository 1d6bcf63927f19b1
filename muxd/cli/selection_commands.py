"""CLI commands that choose and name: select-pane, select-window (and next/previous/last), the
last pane, rename-window and rename-session. Flags as tmux's."""

from __future__ import annotations

import argparse

from muxd.cli.table import cli_command

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

_DIRECTIONS = (("-U", "up", "the pane above"), ("-D", "down", "the pane below"),
               ("-L", "left", "the pane to the left"), ("-R", "right", "the pane to the right"))


def _configure_select_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    moves = p.add_mutually_exclusive_group()
    for flag, direction, what in _DIRECTIONS:
        moves.add_argument(flag, dest="direction", action="store_const", const=direction, help=what)
    moves.add_argument("-l", dest="last", action="store_true", help="the previously active pane")
    p.add_argument("-T", dest="title", help="set the pane's title")


@cli_command("select-pane")(_configure_select_pane)
def select_pane(client: Any, args: argparse.Namespace) -> int:
    client.call("select-pane", "ok", target=args.target, direction=args.direction, last=args.last,
                title=args.title)
    return 0


def _configure_last_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target window")


@cli_command("last-pane")(_configure_last_pane)
def last_pane(client: Any, args: argparse.Namespace) -> int:
    client.call("select-pane", "ok", target=args.target, last=True)
    return 0


def _configure_select_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target window (with -n -p -l: its session)")
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("-n", dest="step", action="store_const", const="next", help="the next window")
    steps.add_argument("-p", dest="step", action="store_const", const="previous", help="the previous window")
    steps.add_argument("-l", dest="step", action="store_const", const="last", help="the last window")
    steps.add_argument("-T", dest="step", action="store_const", const="toggle",
                       help="the last window if the target is already the current one")


@cli_command("select-window")(_configure_select_window)
def select_window(client: Any, args: argparse.Namespace) -> int:
    client.call("select-window", "ok", target=args.target, step=args.step)
    return 0


def _configure_session_target(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session")


def _step(step: str) -> Any:
    def body(client: Any, args: argparse.Namespace) -> int:
        client.call("select-window", "ok", target=args.target, step=step)
        return 0

    return body


cli_command("next-window")(_configure_session_target)(_step("next"))
cli_command("previous-window")(_configure_session_target)(_step("previous"))
cli_command("last-window")(_configure_session_target)(_step("last"))


def _configure_rename(kind: str) -> Any:
    def configure(p: argparse.ArgumentParser) -> None:
        p.add_argument("-t", dest="target", help=f"target {kind}")
        p.add_argument("name", help=f"the {kind}'s new name")

    return configure


@cli_command("rename-window")(_configure_rename("window"))
def rename_window(client: Any, args: argparse.Namespace) -> int:
    client.call("rename-window", "ok", target=args.target, name=args.name)
    return 0


@cli_command("rename-session")(_configure_rename("session"))
def rename_session(client: Any, args: argparse.Namespace) -> int:
    client.call("rename-session", "ok", target=args.target, name=args.name)
    return 0
