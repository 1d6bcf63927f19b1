"""`muxd`: the command line, a thin client of the daemon with tmux's verbs and habits."""

from __future__ import annotations

import argparse
import asyncio
import sys

from muxd import __version__
from muxd.cli import attach_commands  # noqa: F401 - registers attach
from muxd.cli import access_commands  # noqa: F401 - registers token, grant, metrics
from muxd.cli import agent_commands, mcp_commands, pane_commands, server_commands, session_commands  # noqa: F401 - they register
from muxd.cli import history_commands  # noqa: F401 - submit, run, history, show, failures, stats, cancel
from muxd.cli import task_commands  # noqa: F401 - task, knowledge
from muxd.cli.table import CLI_COMMANDS, CliCommand
from muxd.errors import MuxdError
from muxd.paths import DEFAULT_SERVER_NAME
from muxd.terminal_text import visible


def build_parser() -> argparse.ArgumentParser:
    # No abbreviations at this level: `--to` after a command (grant) must not read as --token.
    parser = argparse.ArgumentParser(prog="muxd", description="terminal multiplexer for AI coding agents",
                                     allow_abbrev=False)
    parser.add_argument("-L", dest="server_name", default=DEFAULT_SERVER_NAME, metavar="NAME",
                        help="server name (socket NAME.sock in the socket directory)")
    parser.add_argument("-V", "--version", action="version", version=f"muxd {__version__}")
    parser.add_argument("--token", dest="cli_token", metavar="TOKEN",
                        help="act as this muxd token (visible in ps: prefer --token-file or $MUXD_CLI_TOKEN; "
                             "none: the socket owner)")
    parser.add_argument("--token-file", dest="cli_token_file", metavar="FILE",
                        help="act as the muxd token in FILE (its first line)")
    commands = parser.add_subparsers(dest="command_name", metavar="COMMAND")
    for spec in CLI_COMMANDS:
        sub = commands.add_parser(spec.name, aliases=list(spec.aliases), help=spec.help,
                                  description=spec.help, add_help=False)
        sub.add_argument("--help", action="help", help="show this help and exit")
        spec.configure(sub)
        sub.set_defaults(spec=spec)
    return parser


async def _run(spec: CliCommand, args: argparse.Namespace) -> int:
    if spec.local:
        return await spec.body(None, args)
    from muxd.client.autostart import connect

    from muxd.client.token import ENV_CLI_TOKEN, argv_token_warning, cli_token

    if args.cli_token:
        print(f"muxd: {argv_token_warning(ENV_CLI_TOKEN)}", file=sys.stderr)
    token = cli_token(args.cli_token, file=args.cli_token_file)
    client = await connect(args.server_name, start=spec.starts_server, token=token)
    try:
        return await spec.body(client, args)
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    spec = getattr(args, "spec", None)
    if spec is None:  # a bare `muxd`, as a bare `tmux`: a new session with the shell, attached
        args = parser.parse_args(["-L", args.server_name, "new-session"])
        spec = args.spec
    try:
        return asyncio.run(_run(spec, args))
    except MuxdError as exc:
        print(f"muxd: {visible(exc.message)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
