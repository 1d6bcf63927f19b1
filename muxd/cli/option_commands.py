"""CLI commands for options and config files: set-option, show-options (and their -window-
forms), source-file. Flags and output as tmux's; the option table is muxd/daemon/panes/options.py."""

from __future__ import annotations

import argparse
import os
import sys

from muxd.cli.table import cli_command
from muxd.errors import BadRequest, MuxdError

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

SOURCE_DEPTH_MAX = 10  # source-file inside source-file, as deep as tmux allows
_source_depth = 0


def _add_scope_options(p: argparse.ArgumentParser) -> None:
    """-t -g -s -w -p, which set-option and show-options share."""
    p.add_argument("-t", dest="target", help="target session, window or pane")
    p.add_argument("-g", dest="global_", action="store_true", help="the global values (with defaults)")
    p.add_argument("-s", dest="server", action="store_true", help="server options")
    p.add_argument("-w", dest="window", action="store_true", help="window options")
    p.add_argument("-p", dest="pane", action="store_true", help="the target pane's own values")


def _configure_set_option(p: argparse.ArgumentParser) -> None:
    from muxd.daemon.panes.options import OPTIONS  # the table: only when options are set or shown

    _add_scope_options(p)
    p.epilog = ("options: " + "; ".join(f"{o.name} ({o.scope}, default {o.default or 'none'}): {o.help}"
                                        for o in sorted(OPTIONS.values(), key=lambda o: o.name) if not o.inert)
                + "; tmux's other options are kept and shown but do nothing; @name sets a user option")
    p.add_argument("-u", "-U", dest="unset", action="store_true", help="unset: the value is inherited again")
    p.add_argument("-o", dest="only_if_unset", action="store_true", help="fail if already set")
    p.add_argument("-a", dest="append", action="store_true", help="append to the value")
    p.add_argument("-q", dest="quiet", action="store_true", help="no error for an unknown option")
    p.add_argument("-F", dest="formats", action="store_true", help="accepted for tmux compatibility")
    p.add_argument("option", help="the option's name")
    p.add_argument("value", nargs="?", help="its value (none: a flag toggles)")


def _scope(args: argparse.Namespace) -> str:
    return "global" if args.global_ else "pane" if args.pane else "object"


def _set(client: Any, args: argparse.Namespace, window: bool) -> int:
    try:
        client.call("set-option", "ok", target=args.target, name=args.option, value=args.value,
                    scope=_scope(args), unset=args.unset, only_if_unset=args.only_if_unset, append=args.append,
                    kind=_kind(args, window))
    except BadRequest as exc:
        if args.quiet and exc.message.startswith("invalid option"):
            return 0
        raise
    return 0


def _kind(args: argparse.Namespace, window: bool) -> str:
    """-s, -w (or a -window- command, or -p), else session: which options are meant."""
    return "server" if args.server else "window" if window or args.window or args.pane else "session"


@cli_command("set-option")(_configure_set_option)
def set_option(client: Any, args: argparse.Namespace) -> int:
    return _set(client, args, window=False)


@cli_command("set-window-option")(_configure_set_option)
def set_window_option(client: Any, args: argparse.Namespace) -> int:
    return _set(client, args, window=True)


def _configure_show_options(p: argparse.ArgumentParser) -> None:
    _add_scope_options(p)
    p.add_argument("-v", dest="value_only", action="store_true", help="print only the value")
    p.add_argument("-q", dest="quiet", action="store_true", help="no error for an unknown option")
    p.add_argument("-A", "-H", dest="inherited", action="store_true", help="accepted for tmux compatibility")
    p.add_argument("option", nargs="?", help="only this option")


def quoted(value: str) -> str:
    """A value as show-options prints it: bare when it is one plain word, else quoted."""
    if value == "":
        return "''"
    if any(ch.isspace() or ch in "\"'#;$\\{}" for ch in value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def _show(client: Any, args: argparse.Namespace, window: bool) -> int:
    try:
        options = client.call("show-options", "option-list", target=args.target, name=args.option,
                              scope=_scope(args), kind=_kind(args, window)).options
    except BadRequest as exc:
        if args.quiet and exc.message.startswith("invalid option"):
            return 0
        raise
    for option in options:
        print(option.value if args.value_only else f"{option.name} {quoted(option.value)}")
    return 0


@cli_command("show-options")(_configure_show_options)
def show_options(client: Any, args: argparse.Namespace) -> int:
    return _show(client, args, window=False)


@cli_command("show-window-options")(_configure_show_options)
def show_window_options(client: Any, args: argparse.Namespace) -> int:
    return _show(client, args, window=True)


def _configure_source_file(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", dest="quiet", action="store_true", help="no error for a missing file")
    p.add_argument("-n", dest="check_only", action="store_true", help="only check the syntax")
    p.add_argument("-v", dest="verbose", action="store_true", help="print each command as it runs")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files of muxd commands, one a line")


@cli_command("source-file")(_configure_source_file)
def source_file(client: Any, args: argparse.Namespace) -> int:
    """Every command of every file runs, whatever failed before it; each failure is one line
    `PATH:LINE: why` on stderr, and the exit status says whether there was any (as tmux)."""
    global _source_depth
    from muxd.cli.config_file import command_lines

    if _source_depth >= SOURCE_DEPTH_MAX:
        raise BadRequest(f"too many nested files (more than {SOURCE_DEPTH_MAX})")
    failed = False
    for path in args.paths:
        path = os.path.expanduser(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except FileNotFoundError:
            if not args.quiet:
                print(f"muxd: {path}: No such file or directory", file=sys.stderr)
                failed = True
            continue
        except OSError as exc:
            print(f"muxd: {path}: {exc.strerror or exc}", file=sys.stderr)
            failed = True
            continue
        for command in command_lines(text):
            error: str | None = command.error or None
            if error is None and args.verbose:
                print(f"{path}:{command.line}: {' '.join(command.words)}")
            if error is None and not args.check_only:
                _source_depth += 1
                try:
                    error = run_command_line(client, args, command.words)
                finally:
                    _source_depth -= 1
            if error:
                print(f"muxd: {path}:{command.line}: {error}", file=sys.stderr)
            failed = failed or error is not None
    return 1 if failed else 0


def run_command_line(client: Any, outer: argparse.Namespace, words: list[str]) -> str | None:
    """Run one muxd command line (`set -g status off`) through `client`: None when it went well,
    else what went wrong ("" when the command said so itself, as a nested source-file does)."""
    import contextlib
    import io

    from muxd.cli.parsers import build_parser, commands_to_parse
    from muxd.cli.table import implementation

    from muxd.daemon.core.cli_lines import as_tmux_reads

    argv = ["-L", outer.server_name, *as_tmux_reads(words)]
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            args = build_parser(commands_to_parse(argv)).parse_args(argv)
    except SystemExit:  # argparse's own words: the last line, without its "muxd CMD: error: "
        last = (errors.getvalue().strip().splitlines() or ["invalid command"])[-1]
        return last.split("error: ", 1)[-1]
    command = getattr(args, "spec", None)
    if command is None:
        return "no command"
    try:
        status = implementation(command).body(None if command.local else client, args)
    except MuxdError as exc:
        return exc.message
    return None if status == 0 else ""

