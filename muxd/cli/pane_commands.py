"""CLI commands that read, drive and list panes."""

from __future__ import annotations

import argparse
import sys

from muxd.cli._line_number import line_number
from muxd.cli.colour import add_color_option, use_color
from muxd.cli.format_commands import add_format_options
from muxd.cli.format_lines import filtered, pane_lines, session_lines, window_lines
from muxd.cli.render import age, print_json, print_panes, print_table
from muxd.cli.table import cli_command
from muxd.config import HISTORY_START
from muxd.errors import BadRequest

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_send_keys(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-l", dest="literal", action="store_true", help="send the keys as literal text")
    p.add_argument("-H", dest="hex", action="store_true", help="each key is a hex byte (1b, 0d…)")
    p.add_argument("keys", nargs="*", help="key names (Enter, C-c, M-x, F5…) or text")


@cli_command("send-keys")(_configure_send_keys)
def send_keys(client: Any, args: argparse.Namespace) -> int:
    client.call("send-keys", "ok", target=args.target, keys=args.keys, literal=args.literal, hex=args.hex)
    return 0


def _configure_capture(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-p", dest="print", action="store_true", help="print to stdout (always done)")
    p.add_argument("-e", dest="escapes", action="store_true", help="keep colours as SGR escapes")
    p.add_argument("-J", dest="join", action="store_true", help="join wrapped lines")
    p.add_argument("-S", dest="start", help="first line: negative reaches into scrollback, - is the oldest")
    p.add_argument("-E", dest="end", help="last line; - is the last visible line")


@cli_command("capture-pane")(_configure_capture)
def capture_pane(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("capture-pane", "captured", target=args.target,
                        start=line_number(args.start, "-S", HISTORY_START),
                        end=line_number(args.end, "-E", None),
                        escapes=args.escapes, join_wrapped=args.join)
    sys.stdout.write(reply.text)
    return 0


def _configure_list_panes(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="session or window (default: every pane; with -F tmux's: this window)")
    p.add_argument("-a", dest="all", action="store_true", help="every pane of the server")
    p.add_argument("-s", dest="session_scope", action="store_true", help="with -F: the target's whole session")
    p.add_argument("--json", action="store_true", help="one JSON object per pane")
    add_format_options(p)
    add_color_option(p)


@cli_command("list-panes")(_configure_list_panes)
def list_panes(client: Any, args: argparse.Namespace) -> int:
    if args.format is not None:
        pane_lines(client, args, args.format)
        return 0
    reply = client.call("list-panes", "pane-list", target=args.target, all=args.all)
    panes = filtered(client, args.filter, "panes", reply.panes)
    if args.json:
        print_json(panes)
    else:
        print_panes(panes, color=use_color(args.color))
    return 0


def _configure_ls(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable: every pane as JSON")
    p.add_argument("--sessions", action="store_true", help="one row per session, like tmux ls")
    p.add_argument("--all-hosts", action="store_true",
                   help="also the panes of the other daemons sharing this PostgreSQL database (%%N@host)")
    add_format_options(p)
    add_color_option(p)


@cli_command("ls")(_configure_ls)
def ls(client: Any, args: argparse.Namespace) -> int:
    if args.format is not None:  # one line per session, as tmux's list-sessions -F
        session_lines(client, args, args.format)
        return 0
    if args.all_hosts:
        from muxd.cli.fleet_listing import list_all_hosts

        return list_all_hosts(client, json=args.json, color=use_color(args.color))
    if args.sessions:
        sessions = filtered(client, args.filter, "sessions", client.call("list-sessions", "session-list").sessions)
        if args.json:
            print_json(sessions)
        else:
            print_table(["SESSION", "ID", "WINDOWS", "PANES", "AGE"],
                        [[s.name, s.id, str(s.windows), str(s.panes), age(s.created_at)] for s in sessions])
        return 0
    return list_panes(client, argparse.Namespace(target=None, all=True, json=args.json, format=None,
                                                 filter=args.filter, color=args.color))


def _configure_list_windows(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target session")
    p.add_argument("-a", dest="all", action="store_true", help="windows of every session")
    p.add_argument("--json", action="store_true")
    add_format_options(p)


@cli_command("list-windows")(_configure_list_windows)
def list_windows(client: Any, args: argparse.Namespace) -> int:
    if args.format is not None:
        window_lines(client, args, args.format)
        return 0
    reply = client.call("list-windows", "window-list", target=args.target, all=args.all)
    windows = filtered(client, args.filter, "windows", reply.windows)
    if args.json:
        print_json(windows)
    else:
        print_table(["SESSION", "WINDOW", "ID", "NAME", "PANES"],
                    [[w.session, str(w.index) + ("*" if w.active else ""), w.id, w.name, str(w.panes)]
                     for w in windows])
    return 0


def _configure_resize(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-x", dest="columns", help="width: cells, or N%% of the window")
    p.add_argument("-y", dest="lines", help="height: cells, or N%% of the window")
    for flag, where in (("U", "up"), ("D", "down"), ("L", "left"), ("R", "right")):
        p.add_argument(f"-{flag}", dest="direction", action="store_const", const=flag,
                       help=f"move the divider {where} by ADJUSTMENT cells (default 1)")
    p.add_argument("-Z", dest="zoom", action="store_true", help="zoom the pane (or unzoom the window)")
    p.add_argument("adjustment", nargs="?", type=int, default=1, help="cells for -U/-D/-L/-R")


def _cells_or_percent(value: str | None, flag: str) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    number = value[:-1] if value.endswith("%") else value
    if not number.isdigit():
        raise BadRequest(f"{flag} wants cells or a percentage (80, 50%), got {value!r}")
    return (None, int(number)) if value.endswith("%") else (int(number), None)


@cli_command("resize-pane")(_configure_resize)
def resize_pane(client: Any, args: argparse.Namespace) -> int:
    columns, columns_percent = _cells_or_percent(args.columns, "-x")
    lines, lines_percent = _cells_or_percent(args.lines, "-y")
    client.call("resize-pane", "ok", target=args.target, columns=columns, lines=lines,
                columns_percent=columns_percent, lines_percent=lines_percent, direction=args.direction,
                amount=args.adjustment, zoom=args.zoom)
    return 0


def _configure_kill_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")


@cli_command("kill-pane")(_configure_kill_pane)
def kill_pane(client: Any, args: argparse.Namespace) -> int:
    client.call("kill-pane", "ok", target=args.target)
    return 0


def _configure_wait(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--text", help="wait until the screen shows this text")
    what.add_argument("--regex", help="wait until a screen line matches this regular expression")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")


@cli_command("wait")(_configure_wait)
def wait(client: Any, args: argparse.Namespace) -> int:
    import re
    import time

    try:
        pattern = re.compile(args.regex, re.MULTILINE) if args.regex else None
    except re.error as exc:
        raise BadRequest(f"--regex {args.regex!r}: {exc}") from None
    deadline = time.monotonic() + args.timeout
    while True:
        screen = client.call("capture-pane", "captured", target=args.target).text
        if pattern.search(screen) if pattern else args.text in screen:
            return 0
        if time.monotonic() >= deadline:
            print(f"muxd: timed out after {args.timeout:g}s", file=sys.stderr)
            return 1
        time.sleep(WAIT_POLL_S)


WAIT_POLL_S = 0.05
