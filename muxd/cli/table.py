"""The CLI's command table: each command declares its parser and its async body, once."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Body = Callable[[Any, argparse.Namespace], Awaitable[int]]  # (client, args) -> exit code


@dataclass(frozen=True)
class CliCommand:
    name: str
    help: str
    body: Body
    configure: Callable[[argparse.ArgumentParser], None]
    aliases: tuple[str, ...] = ()
    needs_server: bool = True
    starts_server: bool = True  # tmux starts a server for commands that create things
    local: bool = False         # runs without a client connection at all
    extra: dict[str, Any] = field(default_factory=dict)


CLI_COMMANDS: list[CliCommand] = []


def cli_command(name: str, help: str, *, aliases: tuple[str, ...] = (), starts_server: bool = False,
                local: bool = False) -> Callable[[Callable[[argparse.ArgumentParser], None]], Callable[[Body], Body]]:
    """Declare a command: decorate `configure(parser)`, which returns a decorator for the body."""

    def with_configure(configure: Callable[[argparse.ArgumentParser], None]) -> Callable[[Body], Body]:
        def with_body(body: Body) -> Body:
            CLI_COMMANDS.append(CliCommand(name=name, help=help, body=body, configure=configure,
                                           aliases=aliases, starts_server=starts_server, local=local))
            return body

        return with_body

    return with_configure


def add_spawn_options(parser: argparse.ArgumentParser) -> None:
    """Options every pane-creating command shares: where, with what environment, named how."""
    parser.add_argument("-c", dest="cwd", metavar="DIR", help="working directory of the new pane")
    parser.add_argument("-e", dest="env", metavar="VAR=VALUE", action="append", default=[],
                        help="set an environment variable (repeatable)")
    parser.add_argument("--name", dest="pane_name", help="a unique name for the new pane")
    parser.add_argument("--tag", dest="tags", action="append", default=[], help="tag the pane (repeatable)")
    parser.add_argument("--rm", dest="remove_on_exit", action="store_true",
                        help="remove the pane when its program exits")
    parser.add_argument("-P", dest="print_pane", action="store_true", help="print the new pane's id")
    parser.add_argument("--json", action="store_true", help="print the new pane as JSON")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="program and arguments (after --)")


def spawn_from_args(args: argparse.Namespace) -> Any:
    import os

    from muxd.errors import BadRequest
    from muxd.protocol.messages import Spawn

    env: dict[str, str] = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadRequest(f"-e wants VAR=VALUE, got {item!r}")
        env[key] = value
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    cwd = os.path.abspath(os.path.expanduser(args.cwd)) if args.cwd else os.getcwd()
    return Spawn(command=command, cwd=cwd, env=env, pane_name=args.pane_name, tags=args.tags,
                 remove_on_exit=args.remove_on_exit)
