"""`muxd tmux …` for the command lines tools send on every call, answered without muxd's CLI.

Claude Code's agent teams and libtmux run `tmux` once per command (display-message -p,
list-panes -F, send-keys, capture-pane, has-session), and a tmux client answers in ~3 ms. The
full `muxd tmux` (tmux_commands.py) builds argparse parsers and imports the CLI around them;
here the shim's launcher (daemon/tmux/shim.py, cli/tmux_launcher.py) starts the interpreter
without `site` (-S) and these few commands' options are read by hand, their bodies the CLI's own
or its one request.

Only a line read exactly as the full parser reads it is answered here: known commands, each
given single-letter options it takes (`-t %0`, `-t%0`, `-pJ`), then its operands, none of which
looks like an option. Anything else (another command, `--`, `-pt`, `-V`, a bad line
number…) is handed to the full CLI before anything is sent, so it gets the answer and the error
it always got. site-packages is added only when something needs it (tmux_launcher.SiteOnDemand).
"""

from __future__ import annotations

import sys

from muxd._environ import getenv
from muxd.cli.tmux_defaults import DEFAULT_FORMATS, TMUX_ONLY_FLAGS, exact_target
from muxd.config import HISTORY_START
from muxd.errors import MuxdError
from muxd.socket_names import DEFAULT_SERVER_NAME, plain_path, socket_dir_text, split_path
from muxd.tmux_line import find_command, parse_line

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any

# Per tmux command: the letters of its options that take a value, of its flags, and how many
# operands it takes (None: any number), as its CLI command's parser declares them, with
# TMUX_ONLY_FLAGS added (tests/test_tmux_fast_path.py holds the two to each other).
FAST_COMMANDS: dict[str, tuple[str, str, int | None]] = {
    "has-session": ("t", "", 0),
    "send-keys": ("t", "lH", None),
    "capture-pane": ("tSE", "peJ", 0),
    "display-message": ("tFcd", "pavIN", 1),
    "list-panes": ("tFf", "as", 0),
    "list-windows": ("tFf", "a", 0),
    "list-sessions": ("Ff", "", 0),
}
_FORMAT_COMMANDS = ("display-message", "list-panes", "list-windows", "list-sessions")


class Args:
    """What a CLI command's body reads of its options (argparse.Namespace's part)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


class FastCommand:
    """One command of the line: its tmux name, options by letter, flags and operands."""

    __slots__ = ("name", "values", "flags", "operands")

    def __init__(self, name: str, values: dict[str, str], flags: set[str], operands: list[str]) -> None:
        self.name = name
        self.values = values
        self.flags = flags
        self.operands = operands


def letters(name: str) -> tuple[str, str, int | None]:
    valued, flagged, most = FAST_COMMANDS[name]
    ignored = TMUX_ONLY_FLAGS.get(name, ())
    valued += "".join(flag[1] for flag in ignored if flag.endswith("="))
    flagged += "".join(flag[1] for flag in ignored if not flag.endswith("="))
    return valued, flagged, most


def _not_an_option(word: str) -> bool:
    """Whether argparse reads `word` as a value, not an option: `-`, a negative number and
    words not starting with `-` (one with a space too, but that is left to it)."""
    return not word.startswith("-") or word == "-" or word[1:].isdecimal()


def read_command(words: list[str]) -> FastCommand | None:
    """`words` (a command's) as the full parser would read them; None unless sure."""
    try:
        name = find_command(words[0])
    except MuxdError:
        return None
    if name not in FAST_COMMANDS:
        return None
    return read_words(name, words, *letters(name))


def read_words(name: str, words: list[str], valued: str, flagged: str, most: int | None) -> FastCommand | None:
    """`words` (command `name`'s: its name, then single-letter options, the `valued` letters
    taking a value and the `flagged` ones none, then at most `most` operands, None: any) as
    argparse reads them; None unless sure (cli_fast_path.py reads muxd's own commands so)."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    at = 1
    while at < len(words) and not _not_an_option(words[at]):
        word = words[at]
        at += 1
        if word[2:3] == "=":  # argparse's -t=NAME is NAME, tmux's =NAME: left to the full parser
            return None
        for offset, letter in enumerate(word[1:], 2):  # -pJ, -t%0 and -F#{pane_id} as getopt reads them
            if letter in flagged:
                flags.add(letter)
                continue
            if letter not in valued:
                return None
            value = word[offset:]
            if not value:
                if at == len(words) or not _not_an_option(words[at]):
                    return None
                value, at = words[at], at + 1
            values[letter] = value
            break
    operands = words[at:]
    if not all(map(_not_an_option, operands)) or most is not None and len(operands) > most:
        return None
    if name == "capture-pane":
        from muxd.cli._line_number import line_number  # here: the other commands take no line number

        try:
            line_number(values.get("S"), "-S", None), line_number(values.get("E"), "-E", None)
        except MuxdError:
            return None  # the full CLI says what is wrong, as ever
    return FastCommand(name, values, flags, operands)


def server_of(options: dict[str, str]) -> tuple[str | None, str | None]:
    """(name, path) of the server a line's -S/-L choose, as TmuxServer does when muxd's own -L
    is not given: -S, else -L, else the shimmed pane's ($TMUX, when $MUXD says it is ours), else
    the default; a -S socket in muxd's socket directory is a server by name."""
    tmux_socket = (getenv("TMUX") or "").split(",", 1)[0]
    if "S" in options:
        path = plain_path(options["S"])
    elif "L" in options:
        return options["L"], None
    elif tmux_socket and tmux_socket == getenv("MUXD"):
        path = plain_path(tmux_socket)
    else:
        return DEFAULT_SERVER_NAME, None
    directory, file = split_path(path)
    directory = directory or "."
    if directory == socket_dir_text() and file.endswith(".sock") and len(file) > len(".sock"):
        return file[:-len(".sock")], path
    return None, path


def answer(words: list[str]) -> int | None:
    """Run the tmux command line `words` if this path knows it all; its exit status, or None
    when the full CLI must answer it (nothing was sent then)."""
    try:
        line = parse_line(words)
    except MuxdError:
        return None
    if line.flags & {"V", "C"} or "c" in line.options or not line.commands:
        return None
    commands = [read_command(command) for command in line.commands]
    if not all(commands):
        return None
    name, path = server_of(line.options)
    client = None
    try:
        for command in commands:
            assert command is not None
            if client is None:
                client = _connect(name, path)
            run(command, client)
        sys.stdout.flush()
        return 0
    except MuxdError as exc:
        sys.stdout.flush()
        print(_shown(exc.message), file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()


def _connect(name: str | None, path: str | None) -> Any:
    from muxd.client.blocking import BlockingClient, connect
    from muxd.client.token import cli_token

    # The Hello leaves with the first request: one round trip less.
    if name is not None:  # none of FAST_COMMANDS starts a server (cli/table.py)
        return connect(name, start=False, client_name="muxd-tmux", token=cli_token(), greet_later=True)
    return BlockingClient.connect(path, client_name="muxd-tmux", token=cli_token(), greet_later=True)


def run(command: FastCommand, client: Any) -> None:
    """One command, on `client`: what its CLI body with tmux's defaults does."""
    values, flags = command.values, command.flags
    target = values.get("t")
    if target:
        target = exact_target(target)
    elif target is None and command.name != "list-sessions":
        target = _own_pane(client)
    if command.name == "has-session":
        client.call("has-session", "ok", target=target)
    elif command.name == "send-keys":
        client.call("send-keys", "ok", target=target, keys=command.operands, literal="l" in flags, hex="H" in flags)
    elif command.name == "capture-pane":
        capture(client, target, values, flags)
    else:
        _run_format_command(command, client, target)


def capture(client: Any, target: str | None, values: dict[str, str], flags: set[str]) -> None:
    """capture-pane's body (cli/pane_commands.py's), its options by letter: the screen printed."""
    from muxd.cli._line_number import line_number

    reply = client.call("capture-pane", "captured", target=target,
                        start=line_number(values.get("S"), "-S", HISTORY_START),
                        end=line_number(values.get("E"), "-E", None), escapes="e" in flags, join_wrapped="J" in flags)
    sys.stdout.write(reply.text)


def _run_format_command(command: FastCommand, client: Any, target: str | None) -> None:
    """Its lines, expanded by the daemon: one request (format_lines.expanded)."""
    from muxd.cli import format_lines

    values, flags = command.values, command.flags
    if command.name == "display-message":
        format_lines.display(client, Args(target=target, format=values.get("F"), all_variables="a" in flags,
                                          message=command.operands[0] if command.operands else None))
        return
    scope = " -a" if "a" in flags else " -s" if "s" in flags else ""
    template = values.get("F", DEFAULT_FORMATS.get(command.name + scope, DEFAULT_FORMATS.get(command.name)))
    args = Args(target=target, all="a" in flags, session_scope="s" in flags, filter=values.get("f"))
    lines = {"list-panes": format_lines.pane_lines, "list-windows": format_lines.window_lines,
             "list-sessions": format_lines.session_lines}[command.name]
    lines(client, args, template)


def _own_pane(client: Any) -> str | None:
    """Without -t, tmux acts on the pane it runs in when it speaks to that pane's server."""
    tmux_socket = (getenv("TMUX") or "").split(",", 1)[0]
    if tmux_socket and tmux_socket == getenv("MUXD") and tmux_socket == client.socket_path:
        return getenv("TMUX_PANE") or None
    return None


def _shown(text: str) -> str:
    """terminal_text.visible(text), its regex imported only for a text that needs it: every
    character it escapes is one str.isprintable refuses."""
    if text.isprintable():
        return text
    from muxd.terminal_text import visible

    return visible(text)


def answer_or_exit(words: list[str]) -> int | None:
    """answer(words), with the CLI's statuses for a reader that left and for ^C."""
    try:
        return answer(words)
    except BrokenPipeError:  # the reader left (`tmux capture-pane -p | head -1`)
        from muxd.cli._closed_pipe import closed_pipe

        return closed_pipe()
    except KeyboardInterrupt:
        return 130
