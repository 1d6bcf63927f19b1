"""`muxd tmux ARGS…`: tmux's command line, answered by muxd.

Tools that drive tmux (Claude Code's agent teams, orchestration scripts, libtmux) get muxd
panes: each tmux command runs muxd's CLI command of the same name (cli/table.py), parsed by
that command's own options, on one connection. Only what tmux does differently is said here:
its global options, `;` between commands, its names and aliases, flags it has that muxd accepts
without acting on, its default output formats, its default target (the pane in TMUX_PANE), and
its error lines (stderr, exit status 1). Panes it creates are shimmed panes (daemon/tmux/shim.py).
The lines tools send on every call are answered sooner by tmux_fast_path.py, alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from muxd.cli.table import CliCommand, cli_command, command_named, implementation
from muxd.cli.tmux_defaults import DEFAULT_FORMATS, TMUX_ONLY_FLAGS, exact_target
from muxd.config import TMUX_VERSION
from muxd.errors import BadRequest, MuxdError
from muxd.paths import DEFAULT_SERVER_NAME, socket_dir, socket_path
from muxd.terminal_text import visible
from muxd.tmux_line import TmuxLine, find_command, parse_line

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


class TmuxCommandParser(argparse.ArgumentParser):
    """One command's options; a bad one is tmux's one-line error, not argparse's usage."""

    def error(self, message: str) -> Any:
        if message.startswith("unrecognized arguments: "):
            extra = message.split(": ", 1)[1].split()[0]
            if extra.startswith("-"):
                message = f"unknown flag {extra}"
            else:
                most = sum(1 for action in self._actions if not action.option_strings)
                message = f"too many arguments (need at most {most})"
        raise BadRequest(f"command {self.prog}: {message}")


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("words", nargs=argparse.REMAINDER,
                   help="a tmux command line: [-L NAME | -S PATH] [-V] command [flags] [; command …]")


@cli_command("tmux")(_configure)
def tmux(client: Any, args: argparse.Namespace) -> int:
    words = list(args.words)
    if words[:1] in (["watch"], ["unwatch"]):  # muxd's own: adopt, or let go, a tmux server's panes
        from muxd.cli.tmux_watch_commands import watch_main

        return watch_main(words, args)
    if getattr(args, "host_url", None):  # its connection is a shim's, to a socket: said, not ignored
        raise BadRequest("-H does not apply to `muxd tmux`: it answers for a server of this host (run it there)")
    return run_tmux(words, args)


def run_tmux(words: list[str], muxd_args: argparse.Namespace) -> int:
    """Run one tmux command line on the server muxd's own options name (`muxd_args`: -L, the
    token options), else the one it names itself; its exit status."""
    try:
        line = parse_line(words)
    except MuxdError as exc:
        print(f"tmux: {exc.message}", file=sys.stderr)
        return 1
    if "V" in line.flags:
        print(f"tmux {TMUX_VERSION}")
        return 0
    if "C" in line.flags or "c" in line.options:
        print("muxd tmux: control mode (-C) and -c are not supported", file=sys.stderr)
        return 1
    try:
        server = TmuxServer(line, muxd_args)
    except MuxdError as exc:
        print(f"muxd tmux: {visible(exc.message)}", file=sys.stderr)
        return 1
    try:
        for command in line.commands or [["new-session"]]:
            status = server.run(command)
            if status:
                return status
        return 0
    except MuxdError as exc:
        print(visible(exc.message), file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
        server.close()


class TmuxServer:
    """The muxd server a tmux command line speaks to, connected on its first command that needs
    it, as the token muxd's CLI would present (cli/main.py: chosen_token): as tmux chooses its
    server (-S, else -L, else $TMUX's, else the default), muxd's own -L being one more -L, which
    the line's may repeat but not contradict."""

    def __init__(self, line: TmuxLine, muxd_args: argparse.Namespace) -> None:
        self.muxd_args = muxd_args
        self.name: str | None = None
        self.path: Path | None = None
        muxd_name = getattr(muxd_args, "server_name", None)  # None: muxd's -L was not given
        # $TMUX leads to muxd only in a shimmed pane, where it names the server in $MUXD too; in
        # a real tmux's pane it names tmux's socket, which muxd's protocol must not be sent to.
        tmux_socket = os.environ.get("TMUX", "").split(",", 1)[0]
        shimmed = bool(tmux_socket) and tmux_socket == os.environ.get("MUXD")
        if "S" in line.options:
            self.path = Path(line.options["S"])
        elif "L" in line.options:
            self.name = line.options["L"]
        elif muxd_name is None and shimmed:
            self.path = Path(tmux_socket)
        else:
            self.name = muxd_name or DEFAULT_SERVER_NAME
        if muxd_name is not None:
            self._refuse_another(muxd_name)
        if self.path is not None and self.path.parent == socket_dir() and self.path.suffix == ".sock":
            self.name = self.path.stem  # one of ours by name: it can be started
        # Without -t, tmux acts on the pane it runs in, when it speaks to that pane's server.
        self.own_pane = os.environ.get("TMUX_PANE") if shimmed else None
        self.own_socket = tmux_socket if shimmed else None
        self._client: Any = None

    def _refuse_another(self, muxd_name: str) -> None:
        """Refuse a line whose -L or -S names a server other than muxd's -L (`muxd_name`)."""
        chosen = self.path if self.path is not None else socket_path(self.name or muxd_name)
        if os.path.realpath(chosen) != os.path.realpath(socket_path(muxd_name)):
            inner = f"-S {self.path}" if self.path is not None else f"-L {self.name}"
            raise BadRequest(f"muxd -L {muxd_name} and tmux {inner} name different servers: give one of them")

    def client(self, start: bool) -> Any:
        if self._client is None:
            from muxd.cli.main import chosen_token
            from muxd.client.blocking import BlockingClient, connect

            token = chosen_token(self.muxd_args)
            if self.name is not None:
                self._client = connect(self.name, start=start, client_name="muxd-tmux", token=token)
            else:
                assert self.path is not None
                self._client = BlockingClient.connect(self.path, client_name="muxd-tmux", token=token)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def run(self, words: list[str]) -> int:
        name = find_command(words[0])
        command = command_named(name)  # muxd's `ls` is tmux's list-sessions
        if command is None:
            raise BadRequest(f"{name}: not supported by muxd")
        args = parse_command(name, command, words[1:])
        args.server_name = self.name or DEFAULT_SERVER_NAME
        args.cli_token, args.cli_token_file = self.muxd_args.cli_token, self.muxd_args.cli_token_file
        self._tmux_defaults(name, args)
        body = implementation(command).body
        if command.local:
            return body(None, args)
        client = self.client(command.starts_server)
        if name == "new-session" and args.tmux_ignored_A and args.session_name and _session_exists(client, args):
            return self.run(["attach-session", "-t", args.session_name])  # -A: attach to it if it exists
        if getattr(args, "target", "") is None and self.own_pane and self.own_socket == client.socket_path:
            args.target = self.own_pane
        return body(client, args)

    @staticmethod
    def _tmux_defaults(name: str, args: argparse.Namespace) -> None:
        """What tmux does where muxd's CLI defaults otherwise."""
        if getattr(args, "target", None):
            args.target = exact_target(args.target)
        if hasattr(args, "tmux_shim"):  # what tmux makes is a tmux pane
            args.tmux_shim = True
        if hasattr(args, "tmux_names"):  # a command line inside (set-hook's) is tmux's: `run` is run-shell
            args.tmux_names = True
        if getattr(args, "print_pane", False) and args.format is None:
            args.format = DEFAULT_FORMATS[name]
        if name.startswith("list-") and getattr(args, "format", "") is None:  # list-keys has no -F
            scope = " -a" if getattr(args, "all", False) else " -s" if getattr(args, "session_scope", False) else ""
            args.format = DEFAULT_FORMATS.get(name + scope, DEFAULT_FORMATS.get(name))


def parse_command(name: str, command: CliCommand, words: list[str]) -> argparse.Namespace:
    return command_parser(name, command).parse_args(words)


def command_parser(name: str, command: CliCommand) -> TmuxCommandParser:
    """The parser of tmux's `name` (muxd's `command`): its options and the flags only tmux has."""
    parser = TmuxCommandParser(prog=name, add_help=False, allow_abbrev=False)
    implementation(command).configure(parser)
    for flag in TMUX_ONLY_FLAGS.get(name, ()):
        option = flag.rstrip("=")
        if option not in parser._option_string_actions:  # muxd may act on it one day: then it is its own
            if flag.endswith("="):
                parser.add_argument(option, dest=f"tmux_ignored_{option[1:]}", help=argparse.SUPPRESS)
            else:
                parser.add_argument(option, dest=f"tmux_ignored_{option[1:]}", action="store_true",
                                    help=argparse.SUPPRESS)
    return parser


def _session_exists(client: Any, args: argparse.Namespace) -> bool:
    from muxd.errors import NotFound

    try:
        client.call("has-session", "ok", target=args.session_name)
    except NotFound:
        return False
    return True
