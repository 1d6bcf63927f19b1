"""`muxd`: the command line, a thin client of the daemon with tmux's verbs and habits.

It has to start fast (`muxd ls` in a loop, an agent polling `has-session`): a command's module
is imported only when that command runs (table.py), one-shot commands talk through the
blocking client, and asyncio is started only by the commands that live on (attach, mcp).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from muxd import __version__
from muxd.cli.table import CLI_COMMANDS, CliCommand, command_named, implementation
from muxd.errors import MuxdError
from muxd.socket_names import CLIENT_NAME_ENV, CONFIG_ENV, DEFAULT_SERVER_NAME, HOST_URL_ENV  # not paths: pathlib
from muxd.terminal_text import visible

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


# Global options that take a value: the word after one is never the command.
_VALUE_OPTIONS = ("-L", "-H", "-f", "--token", "--token-file")


def past_options(argv: Sequence[str]) -> int:
    """The index of the first word of `argv` that is not one of muxd's options taking a value
    (nor that value): the command's name, when the line is as usual."""
    at = 0
    while at < len(argv):
        word = argv[at]
        if word in _VALUE_OPTIONS:
            at += 2
        elif word.startswith(("-L", "-H", "-f", "--token=", "--token-file=")):  # the value attached to the option
            at += 1
        else:
            break
    return min(at, len(argv))


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


def _run(command: CliCommand, args: argparse.Namespace) -> int:
    body = implementation(command).body
    if command.local:
        return body(None, args)
    with connect_cli(args, start=command.starts_server) as client:
        return body(client, args)


def connect_cli(args: argparse.Namespace, *, start: bool) -> Any:
    """A blocking client of the server `-L` names, as the token options say (a context manager);
    `start`: start the server if none runs. Options `args` lacks take their defaults (a command
    whose words muxd's parser never saw: `muxd tmux …`)."""
    # Imported here: `muxd --version` and the local commands need no connection (nor msgspec).
    from muxd.client.blocking import connect

    return connect(getattr(args, "server_name", None) or DEFAULT_SERVER_NAME, start=start,
                   token=chosen_token(args), client_name=os.environ.get(CLIENT_NAME_ENV) or "muxd-cli",
                   host=chosen_host(args))


def chosen_host(args: argparse.Namespace) -> str | None:
    """The host URL of -H, else $MUXD_HOST_URL: the server is on that host (client/remote.py)."""
    return getattr(args, "host_url", None) or os.environ.get(HOST_URL_ENV) or None


def server_address(args: argparse.Namespace) -> str:
    """Where the commands that connect for themselves (attach, watch, top, mcp) reach the server
    `-L` names: its socket's path (its directory checked private), or with a host URL that
    server on the host (an address client/remote.py connects to over ssh)."""
    name = getattr(args, "server_name", None) or DEFAULT_SERVER_NAME
    host = chosen_host(args)
    if host:
        from muxd.client.remote import host_address

        return host_address(host, name)
    from muxd.paths import ensure_socket_dir, socket_path

    path = socket_path(name)
    ensure_socket_dir(path.parent)  # a socket in a directory others can write to may be anyone's
    return str(path)


def chosen_token(args: argparse.Namespace, *, warn: bool = True) -> str | None:
    """The token the CLI presents, as --token-file, --token and $MUXD_CLI_TOKEN say
    (client/token.py), for every front end of the CLI (`muxd tmux …`, attach too); a secret
    given in the command line is warned about (once: `warn=False` where it was already)."""
    from muxd.client.token import ENV_CLI_TOKEN, argv_token_warning, cli_token

    given, file = getattr(args, "cli_token", None), getattr(args, "cli_token_file", None)
    if given and warn:
        print(f"muxd: {argv_token_warning(ENV_CLI_TOKEN)}", file=sys.stderr)
    return cli_token(given, file=file)


def tmux_show(words: Sequence[str]) -> list[str]:
    """`muxd show -g prefix` as tmux reads it, `show-options`: muxd's `show` (an execution) takes
    no short option, so a word after it such as `-g`, `-gv` or `-w` can only be tmux's."""
    at = past_options(words)
    after = words[at + 1] if at + 1 < len(words) else ""
    if words[at:at + 1] == ["show"] and after.startswith("-") and not after.startswith("--") and after != "-h":
        return [*words[:at], "show-options", *words[at + 1:]]
    return list(words)


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv`, by default the program's own (then, as the program, exit
    without the interpreter's teardown when nothing waits for it: exit_at_once)."""
    status = _command(sys.argv[1:] if argv is None else argv)
    if argv is None:
        exit_at_once(status)
    return status


def exit_at_once(status: int) -> None:
    """Exit with `status`, the output written, without the interpreter's teardown (freeing every
    module: ~5 ms of a one-shot command, paid twice on a cold start's way to a live pane), unless
    something waits for that teardown: an atexit handler or another thread. Returns instead then,
    or when the output cannot be written (the usual exit says so)."""
    import atexit
    import threading

    if atexit._ncallbacks() or threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        return
    os._exit(status)


def _command(argv: list[str]) -> int:
    words = tmux_show(argv)
    if words[:1] == ["tmux"]:  # the lines tools send on every call, answered without a parser
        from muxd.cli.tmux_fast_path import answer_or_exit

        status = answer_or_exit(words[1:])
        if status is not None:
            return status
    args = raw_command_args(words)  # `muxd tmux -L x ls`: tmux's words, after muxd's own options
    if args is None:
        parser = build_parser(commands_to_parse(words))
        args = parser.parse_args(words)
        if getattr(args, "spec", None) is None:  # a bare `muxd`, as a bare `tmux`: a new session, attached
            args = parser.parse_args([*words, "new-session"])
    command = args.spec
    if args.config_file:  # read by the server this command starts, if it starts one (as tmux -f)
        os.environ[CONFIG_ENV] = os.path.abspath(os.path.expanduser(args.config_file))
    try:
        status = _run(command, args)
        sys.stdout.flush()  # here, where a closed pipe is caught, rather than at exit
        return status
    except BrokenPipeError:
        from muxd.cli._closed_pipe import closed_pipe  # `muxd --version` imports no muxd.cli module

        return closed_pipe()
    except MuxdError as exc:
        print(f"muxd: {visible(exc.message)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
