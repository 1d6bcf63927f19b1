"""`muxd`: the command line, a thin client of the daemon with tmux's verbs and habits.

It has to start fast (`muxd ls` in a loop, an agent polling `has-session`): a command's module
is imported only when that command runs (table.py), one-shot commands talk through the
blocking client, and asyncio is started only by the commands that live on (attach, mcp). The
lines agents poll with most (`muxd capture-pane -p -t X`) are answered without argparse
(cli_fast_path.py); the parsers (parsers.py) are imported for the others.
"""

from __future__ import annotations

import os
import sys

from muxd.cli.global_options import past_options
from muxd.errors import MuxdError
from muxd.socket_names import CLIENT_NAME_ENV, CONFIG_ENV, DEFAULT_SERVER_NAME, HOST_URL_ENV  # not paths: pathlib

TYPE_CHECKING = False  # typing only for the type checker: see table.py
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

    from muxd.cli.table import CliCommand

def _run(command: CliCommand, args: argparse.Namespace) -> int:
    from muxd.cli.table import implementation

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

    threading = sys.modules.get("threading")  # never imported: no thread started but this one
    if atexit._ncallbacks() or threading is not None and threading.active_count() > 1:
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
    from muxd.cli.cli_fast_path import read_line, run  # muxd's own lines of that kind

    fast = read_line(words)
    if fast is not None:
        return _answered(lambda: run(*fast))
    from muxd.cli.parsers import build_parser, commands_to_parse, raw_command_args

    args = raw_command_args(words)  # `muxd tmux -L x ls`: tmux's words, after muxd's own options
    if args is None:
        parser = build_parser(commands_to_parse(words))
        args = parser.parse_args(words)
        if getattr(args, "spec", None) is None:  # a bare `muxd`, as a bare `tmux`: a new session, attached
            args = parser.parse_args([*words, "new-session"])
    command = args.spec
    if args.config_file:  # read by the server this command starts, if it starts one (as tmux -f)
        os.environ[CONFIG_ENV] = os.path.abspath(os.path.expanduser(args.config_file))
    return _answered(lambda: _run(command, args))


def _answered(run: Callable[[], int]) -> int:
    """`run`'s exit status, its output written; what it raised said as the CLI says it."""
    try:
        status = run()
        sys.stdout.flush()  # here, where a closed pipe is caught, rather than at exit
        return status
    except BrokenPipeError:
        from muxd.cli._closed_pipe import closed_pipe  # `muxd --version` imports no muxd.cli module

        return closed_pipe()
    except MuxdError as exc:
        from muxd.terminal_text import visible  # its regex only for an error's words

        print(f"muxd: {visible(exc.message)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
