"""`muxd [-L NAME] capture-pane -p -t X`, in muxd's own words, answered without argparse.

An agent or a script polls a pane with it, and a cold start's way to a live pane ends with it:
argparse with gettext and re, the parsers of muxd and of the command and the command's module
cost such a call about as much CPU as the interpreter's own start. As the tmux shim's fast path
(tmux_fast_path.py, whose reader this uses), only a line read exactly as the parsers
(parsers.py) read it is answered here: muxd's -L alone before the command, then the command's
single-letter options as its parser declares them, no operand the command does not take.
Anything else (--token, -H or $MUXD_HOST_URL, -f, --help, `-L=x`…) goes to the parsers before
anything is sent, so it gets the answer and the error it always got.
"""

from __future__ import annotations

from muxd._environ import getenv
from muxd.cli.table import command_named
from muxd.socket_names import CLIENT_NAME_ENV, DEFAULT_SERVER_NAME, HOST_URL_ENV

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from muxd.cli.tmux_fast_path import FastCommand

# Per command (its name in cli/table.py): the letters of its options that take a value, of its
# flags, and how many operands it takes, as its parser declares them (pane_commands.py; the
# tests hold the two to each other), and its body, given the client and the command read.
FAST_COMMANDS: dict[str, tuple[str, str, int | None]] = {
    "capture-pane": ("tSE", "peJ", 0),
}


def _capture(client: Any, command: FastCommand) -> None:
    from muxd.cli.tmux_fast_path import capture

    capture(client, command.values.get("t"), command.values, command.flags)


_BODIES: dict[str, Callable[[Any, FastCommand], None]] = {"capture-pane": _capture}


def server_and_words(argv: list[str]) -> tuple[str, list[str]] | None:
    """The server name muxd's options before the command choose (-L, else the default) and the
    command's words, when -L (once, its value not looking like an option) is all they are."""
    name, at = DEFAULT_SERVER_NAME, 0
    if argv[:1] == ["-L"] and len(argv) > 1 and not argv[1].startswith("-"):
        name, at = argv[1], 2
    elif argv[:1] and argv[0].startswith("-L") and not argv[0].startswith("-L="):
        name, at = argv[0][2:], 1
    words = argv[at:]
    if not words or words[0].startswith("-"):
        return None
    return name or DEFAULT_SERVER_NAME, words  # -L "" is the default, as the parsers leave it


def read_line(argv: list[str]) -> tuple[str, FastCommand] | None:
    """(server name, command) of the command line `argv` when this path answers it; else None
    (nothing was sent then)."""
    if getenv(HOST_URL_ENV):  # a server on another host: client/remote.py, through the parsers
        return None
    found = server_and_words(argv)
    if found is None:
        return None
    name, words = found
    spec = command_named(words[0])
    if spec is None or spec.name not in FAST_COMMANDS:
        return None
    from muxd.cli.tmux_fast_path import read_words  # the reader: only for a line that may be one

    command = read_words(spec.name, words, *FAST_COMMANDS[spec.name])
    return None if command is None else (name, command)


def run(server: str, command: FastCommand) -> int:
    """The command read, on server `server`: its body, as the parsers' way runs it."""
    from muxd.client.blocking import connect
    from muxd.client.token import cli_token

    # The Hello leaves with the first request: one round trip less (none of FAST_COMMANDS starts a server).
    client = connect(server, start=False, client_name=getenv(CLIENT_NAME_ENV) or "muxd-cli", token=cli_token(),
                     greet_later=True)
    try:
        _BODIES[command.name](client, command)
    finally:
        client.close()
    return 0
