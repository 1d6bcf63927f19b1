"""CLI commands that create and remove sessions and windows."""

from __future__ import annotations

import argparse
from typing import Any

from muxd.cli.attach_commands import add_prefix_option, attach_terminal, chosen_prefix
from muxd.cli.render import print_json
from muxd.cli.table import add_spawn_options, cli_command, spawn_from_args
from muxd.config import DEFAULT_COLUMNS, DEFAULT_LINES
from muxd.protocol.messages import (
    HasSession, KillSession, KillWindow, NewSession, NewWindow, PaneInfo, SplitWindow,
)


def report_new_pane(args: argparse.Namespace, pane: PaneInfo) -> None:
    if args.json:
        print_json(pane)
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


@cli_command("new-session", "create a session with one pane", aliases=("new",), starts_server=True)(
    _configure_new_session)
async def new_session(client: Any, args: argparse.Namespace) -> int:
    columns, lines = DEFAULT_COLUMNS, DEFAULT_LINES
    if not args.detached:  # check before creating anything, as tmux does; size it to this terminal
        from muxd.client.attach import check_terminal

        size = check_terminal()
        chosen_prefix(args)
        columns, lines = size.columns, max(1, size.lines - 1)
    columns = columns if args.columns is None else args.columns
    lines = lines if args.lines is None else args.lines
    reply = await client.call(NewSession, name=args.session_name, window_name=args.window_name,
                              columns=columns, lines=lines, spawn=spawn_from_args(args))
    report_new_pane(args, reply.pane)
    if not args.detached:
        return await attach_terminal(args, reply.pane.session_id)
    return 0


def _configure_new_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session")
    p.add_argument("-n", dest="window_name", help="window name")
    p.add_argument("-d", dest="detached", action="store_true", help="accepted for tmux compatibility")
    add_spawn_options(p)


@cli_command("new-window", "create a window in a session", aliases=("neww",))(_configure_new_window)
async def new_window(client: Any, args: argparse.Namespace) -> int:
    reply = await client.call(NewWindow, target=args.target, name=args.window_name,
                              spawn=spawn_from_args(args))
    report_new_pane(args, reply.pane)
    return 0


def _configure_split_window(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="pane to split")
    p.add_argument("-h", dest="horizontal", action="store_true", help="side by side (left/right)")
    p.add_argument("-v", dest="vertical", action="store_true", help="stacked (top/bottom; the default)")
    p.add_argument("-d", dest="detached", action="store_true", help="accepted for tmux compatibility")
    add_spawn_options(p)


@cli_command("split-window", "split a pane in two, running a program in the new half",
             aliases=("splitw",))(_configure_split_window)
async def split_window(client: Any, args: argparse.Namespace) -> int:
    reply = await client.call(SplitWindow, target=args.target, horizontal=args.horizontal,
                              spawn=spawn_from_args(args))
    report_new_pane(args, reply.pane)
    return 0


def _configure_target(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target")


@cli_command("kill-session", "kill a session and every pane in it")(_configure_target)
async def kill_session(client: Any, args: argparse.Namespace) -> int:
    await client.call(KillSession, target=args.target)
    return 0


@cli_command("kill-window", "kill a window and its panes", aliases=("killw",))(_configure_target)
async def kill_window(client: Any, args: argparse.Namespace) -> int:
    await client.call(KillWindow, target=args.target)
    return 0


@cli_command("has-session", "exit 0 if the session exists", aliases=("has",))(_configure_target)
async def has_session(client: Any, args: argparse.Namespace) -> int:
    await client.call(HasSession, target=args.target)
    return 0
