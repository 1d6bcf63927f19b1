"""muxd command lines that the daemon runs itself — the command prompt's (`C-b :`) and the
hooks' — the way the `muxd` CLI runs them: each command in a `muxd` process of its own, a
client of this daemon acting as its owner, parsed by that command's own options. Also what
set-hook checks of a line before it keeps it, and the form it keeps it in (tmux's).

The one place of the daemon that reads the CLI's command table (cli/table.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from muxd.config import CLI_OUTPUT_MAX_BYTES
from muxd.errors import BadRequest
from muxd.tmux_line import find_command, split_commands

if TYPE_CHECKING:
    from muxd.cli.table import CliCommand

# Not passed on: the command runs as the socket owner, in no pane.
_ENV_DROPPED = ("MUXD", "MUXD_PANE", "MUXD_TOKEN", "MUXD_CLI_TOKEN", "TMUX", "TMUX_PANE")
# What tmux's args_escape quotes: in double quotes when a word has one of these, else in single
# quotes when it has a space or a double quote.
_DOUBLE_QUOTED = frozenset(" #';${}%")
_SINGLE_QUOTED = frozenset(' "')


# Words a tmux config file (and a key binding, the command prompt) means otherwise than muxd's
# CLI: tmux's `run` is run-shell, not a muxd execution; its `show` is show-options.
TMUX_MEANINGS = {"run": "run-shell", "show": "show-options"}


def as_tmux_reads(words: list[str]) -> list[str]:
    """A command's words with its name as tmux reads it (TMUX_MEANINGS)."""
    return [TMUX_MEANINGS.get(words[0], words[0]), *words[1:]] if words else words


class _Parser(argparse.ArgumentParser):
    """A command's options, read in the daemon: a mistake is an error to show, not an exit."""

    def error(self, message: str) -> NoReturn:
        raise BadRequest(message)


def command_parser(words: list[str]) -> tuple[CliCommand | None, argparse.ArgumentParser]:
    """The CLI command `words` names (None: no such command) and a parser of its options."""
    from muxd.cli.table import command_named, implementation

    command = command_named(words[0])
    parser = _Parser(prog=f"muxd {words[0]}", add_help=False)
    if command is not None:
        implementation(command).configure(parser)
    return command, parser


def with_default_target(words: list[str], target: str | None) -> list[str]:
    """`words` with `-t target` after the command name when the command takes -t and the line
    gave none (options after `--` belong to the program, not to muxd)."""
    if target is None or not words:
        return words
    command, parser = command_parser(words)
    options = words[1:words.index("--")] if "--" in words else words[1:]
    if command is None or "-t" not in parser._option_string_actions or any(w.startswith("-t") for w in options):
        return words
    return [words[0], "-t", target, *words[1:]]


def line_commands(line: str) -> list[list[str]]:
    """The commands of a line (`;` between them, words quoted as in the shell)."""
    try:
        return split_commands(shlex.split(line))
    except ValueError as exc:
        raise BadRequest(f"syntax error: {str(exc).lower()}") from None


def command_name(word: str, tmux_names: bool = False) -> str:
    """The name a command line's first word stands for: muxd's own command of that name or
    alias (as a config file reads it), written as tmux writes it where tmux's command of that
    name is the same one (`display` is display-message); else tmux's lookup (a unique prefix).
    `tmux_names`: tmux's lookup first (a line `muxd tmux` was given: its `run` is run-shell).
    BadRequest as tmux words it when neither has it."""
    from muxd.cli.table import command_named

    own = None if tmux_names else command_named(word)
    try:
        tmux_name: str | None = find_command(word)
    except BadRequest:
        if tmux_names:
            raise
        tmux_name = None
    if tmux_name is not None and command_named(tmux_name) is not None and (own is None or command_named(tmux_name) is own):
        return tmux_name
    if own is not None:
        return own.name
    if tmux_name is not None:
        raise BadRequest(f"{tmux_name}: not supported by muxd")
    raise BadRequest(f"unknown command: {word}")


def checked_line(line: str, tmux_names: bool = False) -> str:
    """`line` as set-hook keeps it, once each of its commands is known and its options parse:
    tmux's names and quoting (`display 'a b'` is `display-message "a b"`), commands joined by
    ` ; `. BadRequest naming what is wrong otherwise. `tmux_names`: as command_name's."""
    commands = line_commands(line)
    if not commands:
        raise BadRequest("empty value")
    canonical = []
    for words in commands:
        words = [command_name(as_tmux_reads(words)[0], tmux_names), *words[1:]]
        _, parser = command_parser(words)
        try:
            parser.parse_args(words[1:])
        except BadRequest as exc:
            raise BadRequest(f"command {words[0]}: {exc.message}") from None
        except SystemExit:  # an option that prints and exits (help): not for a hook
            raise BadRequest(f"command {words[0]}: invalid arguments") from None
        canonical.append(words)
    text = " ; ".join(" ".join(tmux_word(w) for w in words) for words in canonical)
    return text if line_commands(text) == canonical else line  # tmux's quoting not read back alike: as given


def tmux_word(word: str) -> str:
    """A word as tmux prints it in a command (arguments.c args_escape), where that reads back
    the same here; else quoted for the shell."""
    if word == "":
        return "''"
    quote = '"' if any(c in _DOUBLE_QUOTED for c in word) else "'" if any(c in _SINGLE_QUOTED for c in word) else ""
    if len(word) == 1 and word != " " and (quote or word == "~"):
        written = "\\" + word
    else:
        escaped = word.replace("\\", "\\\\")
        if quote == '"':
            escaped = escaped.replace('"', '\\"')
        tilde = "\\" if word.startswith("~") and quote != "'" else ""  # not read as a home directory
        written = f"{quote}{tilde}{escaped}{quote}"
    try:
        if shlex.split(written) == [word]:
            return written
    except ValueError:
        pass
    return shlex.quote(word)


# ---------------------------------------------------------------- running one command

@dataclass(frozen=True)
class CliRun:
    returncode: int | None  # None: still running after its time, killed
    out: str
    err: str

    def error_line(self) -> str:
        """What went wrong, in one line: the CLI's last line (argparse's usage comes before it)."""
        if self.returncode is None:
            return "still running, killed"
        lines = self.err.strip().splitlines() or [f"exit {self.returncode}"]
        return lines[-1].removeprefix("muxd: ")


async def run_cli(socket_path: Path, argv: list[str], *, cwd: str | None, timeout_s: float,
                  env: dict[str, str] | None = None) -> CliRun:
    """Run `muxd -L NAME argv…` against the daemon of `socket_path`, as its owner; `env` adds to
    the daemon's environment. Its process group (what it started in the background too) is
    killed after `timeout_s`, or when the caller is cancelled. Of its output, the first
    CLI_OUTPUT_MAX_BYTES of each stream are kept."""
    environment = {k: v for k, v in os.environ.items() if k not in _ENV_DROPPED}
    environment.update(MUXD_SOCKET_DIR=str(socket_path.parent), **(env or {}))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "muxd", "-L", socket_path.stem, *argv, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=environment,
        cwd=cwd if cwd and os.path.isdir(cwd) else None, start_new_session=True)
    assert process.stdout is not None and process.stderr is not None
    try:
        out, err, _ = await asyncio.wait_for(
            asyncio.gather(_kept(process.stdout), _kept(process.stderr), process.wait()), timeout_s)
    except TimeoutError:
        await _kill(process)
        return CliRun(None, "", "")
    except BaseException:
        await asyncio.shield(_kill(process))
        raise
    return CliRun(process.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


async def _kept(stream: asyncio.StreamReader) -> bytes:
    """A stream read to its end, its first CLI_OUTPUT_MAX_BYTES kept (the rest read and dropped,
    so the writer never blocks on a full pipe)."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        kept += chunk[:max(0, CLI_OUTPUT_MAX_BYTES - len(kept))]
    return bytes(kept)


async def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    await process.wait()
