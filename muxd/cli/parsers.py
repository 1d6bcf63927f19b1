"""The CLI's argparse parsers: `muxd`'s own, and each command's, which learns its options only
when it parses (its module imported then). Imported only for a line the fast path
(cli_fast_path.py) does not answer: argparse with gettext and re cost a one-shot command ~5 ms."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from muxd import __version__
from muxd.cli.global_options import past_options
from muxd.cli.table import CLI_COMMANDS, CliCommand, command_named, implementation
from muxd.socket_names import DEFAULT_SERVER_NAME, HOST_URL_ENV  # not paths: pathlib

TYPE_CHECKING = False  # typing only for the type checker: see table.py
if TYPE_CHECKING:
    from typing import Any, NoReturn

HELP_FALLBACK_COLUMNS = 80  # help text's width when neither $COLUMNS nor a terminal says

class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, at the width shutil.get_terminal_size would give ($COLUMNS, else
    stdout's terminal, else 80) found without importing shutil: argparse makes a formatter for
    every option it is given, and shutil, with bz2 and lzma, costs `muxd ls` ~1.5 ms."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        if kwargs.get("width") is None:
            kwargs["width"] = _terminal_columns() - 2  # as argparse leaves a margin
        super().__init__(prog, **kwargs)


def _terminal_columns() -> int:
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or HELP_FALLBACK_COLUMNS
    except (AttributeError, ValueError, OSError):
        return HELP_FALLBACK_COLUMNS


class _CommandParser(argparse.ArgumentParser):
    """The parser of one command, which learns the command's options only when it parses: its
    module is imported then, not on every `muxd` (nor for `muxd --help`). A command's own
    subcommands (`task ls`) get this class too, with no command: plain parsers."""

    def __init__(self, *args: Any, command: CliCommand | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)  # add_parser does not pass the parent's on
        super().__init__(*args, **kwargs)
        self._command: CliCommand | None = command

    def learn_options(self) -> None:
        """Add the command's options now (its module imported), once: before parsing, or for a
        walk of every option (completion scripts, the manual)."""
        if self._command is not None:
            command, self._command = self._command, None
            self.add_argument("--help", action="help", help="show this help and exit")
            implementation(command).configure(self)
            if "-h" not in self._option_string_actions:  # split-window -h is tmux's "side by side"
                self.add_argument("-h", action="help", help=argparse.SUPPRESS)
            self.set_defaults(spec=command)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self.learn_options()
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:  # said here, with this command's usage, rather than by `muxd` with its own
            self.error(f"unrecognized arguments: {' '.join(extras)}{self._did_you_mean(extras[0])}")
        return namespace, extras

    def _did_you_mean(self, word: str) -> str:
        if not word.startswith("-"):
            return ""
        import difflib  # only on this error path

        close = difflib.get_close_matches(word.split("=", 1)[0], list(self._option_string_actions), n=2)
        return f" (did you mean {' or '.join(close)}?)" if close else ""


class _TopParser(argparse.ArgumentParser):
    """`muxd`'s own parser: a mistyped command gets "did you mean", not the list of every command."""

    def error(self, message: str) -> NoReturn:
        if message.startswith(_INVALID_COMMAND):
            word = message[len(_INVALID_COMMAND):].split("'")[1]
            import difflib  # only on this error path

            names = [name for c in CLI_COMMANDS for name in (c.name, *c.aliases)]
            close = difflib.get_close_matches(word, names, n=3)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            message = f"unknown command {word!r}{hint}; `muxd --help` lists them"
        super().error(message)


_INVALID_COMMAND = "argument COMMAND: invalid choice: "


class _PrintVersion(argparse.Action):
    """`muxd --version`: argparse's own version action wraps the line with textwrap (~0.7 ms to
    import) to print one short line."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"muxd {__version__}")
        parser.exit()


def commands_to_parse(argv: Sequence[str]) -> Sequence[CliCommand]:
    """The commands a parser of `argv` needs: the one `argv` names (none for --version) when that
    is sure, else every command (help, a mistyped name, anything unusual). Each one costs a parser."""
    at = past_options(argv)
    word = argv[at] if at < len(argv) else "-"
    if word in ("-V", "--version"):
        return ()
    if word.startswith("-"):
        return CLI_COMMANDS
    named = command_named(word)
    return [named] if named is not None else CLI_COMMANDS


def raw_command_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """What a command whose words are its own (`muxd [-L NAME] [--token-file F] tmux -L x ls`)
    needs: muxd's options before it, parsed as for any command, and its words (`args.words`),
    not parsed here; None when `argv` names no such command (or asks for its help)."""
    at = past_options(argv)
    command = next((c for c in CLI_COMMANDS if c.raw and argv[at:at + 1] == [c.name]), None)
    if command is None or list(argv[at + 1:]) in (["-h"], ["--help"]):
        return None
    # -L stays None when not given: the command's own words may then name the server (tmux -L).
    args = argparse.Namespace(server_name=None, host_url=None, config_file=None, cli_token=None, cli_token_file=None)
    if at:  # the launcher in a shimmed pane runs `muxd tmux …`: no parser built for it
        build_parser(()).parse_args(argv[:at], namespace=args)
    args.words, args.spec = list(argv[at + 1:]), command
    return args


_EPILOG = ("Shell completion: muxd completion bash|zsh|fish; manual: muxd man; "
           "a systemd user unit: muxd systemd-unit. `muxd COMMAND --help` for a command's options.")


def build_parser(commands: Sequence[CliCommand] = CLI_COMMANDS) -> argparse.ArgumentParser:
    # No abbreviations at this level: `--to` after a command (grant) must not read as --token.
    parser = _TopParser(prog="muxd", description="terminal multiplexer for AI coding agents", epilog=_EPILOG,
                        allow_abbrev=False, formatter_class=_HelpFormatter)
    parser.add_argument("-L", dest="server_name", default=DEFAULT_SERVER_NAME, metavar="NAME",
                        help="server name (socket NAME.sock in the socket directory)")
    parser.add_argument("-H", dest="host_url", metavar="URL",
                        help=f"the server on another host, ssh://[user@]host[:port], reached over ssh (default "
                             f"${HOST_URL_ENV}): muxd must be on that host's PATH; -L names its server there")
    parser.add_argument("-V", "--version", action=_PrintVersion)
    parser.add_argument("-f", dest="config_file", metavar="FILE",
                        help="the config file a server started now loads (default $XDG_CONFIG_HOME/muxd/muxd.conf, "
                             "else ~/.config/muxd/muxd.conf)")
    parser.add_argument("--token", dest="cli_token", metavar="TOKEN",
                        help="act as this muxd token (visible in ps: prefer --token-file or $MUXD_CLI_TOKEN; "
                             "none: the socket owner)")
    parser.add_argument("--token-file", dest="cli_token_file", metavar="FILE",
                        help="act as the muxd token in FILE (its first line)")
    # prog given, as argparse would compute it: computing it costs a help formatter (shutil).
    subparsers = parser.add_subparsers(dest="command_name", metavar="COMMAND", parser_class=_CommandParser,
                                       prog=parser.prog)
    for command in commands:
        subparsers.add_parser(command.name, aliases=list(command.aliases), help=command.help,
                              description=command.help, add_help=False, command=command)
    return parser


def full_parser() -> argparse.ArgumentParser:
    """The parser of every command with all its options learnt (every command module imported):
    what the completion scripts and the manual are generated from, so they follow the table."""
    parser = build_parser()
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        for command_parser in {id(p): p for p in action.choices.values()}.values():  # aliases share one
            command_parser.learn_options()
    return parser
