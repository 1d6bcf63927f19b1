"""CLI commands that move text in and out of panes: the paste buffers (list-buffers, show-buffer,
set-buffer, delete-buffer, paste-buffer, load-buffer, save-buffer) and pipe-pane. Flags and
output as tmux's."""

from __future__ import annotations

import argparse
import sys

from muxd.cli.format_commands import add_format_options
from muxd.cli.render import print_json
from muxd.cli.table import cli_command
from muxd.config import PASTE_BUFFER_MAX_CHARS
from muxd.errors import BadRequest, Forbidden, MuxdError, NotFound

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import Any


def _configure_list_buffers(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")
    add_format_options(p)


def buffer_variables(buffer: Any) -> dict[str, str]:
    """tmux's #{buffer_*} of one paste buffer (BufferInfo)."""
    return {"buffer_name": buffer.name, "buffer_size": str(buffer.size), "buffer_sample": buffer.sample}


@cli_command("list-buffers")(_configure_list_buffers)
def list_buffers(client: Any, args: argparse.Namespace) -> int:
    from muxd.formats import expand, is_true

    buffers = client.call("list-buffers", "buffer-list").buffers
    if args.filter is not None:
        buffers = [b for b in buffers if is_true(expand(args.filter, buffer_variables(b)))]
    if args.json:
        print_json(buffers)
        return 0
    for buffer in buffers:
        if args.format is None:
            print(f'{buffer.name}: {buffer.size} bytes: "{buffer.sample}"')
        else:
            print(expand(args.format, buffer_variables(buffer)))
    return 0


def _configure_buffer_name(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", dest="name", metavar="NAME", help="the buffer (default: the newest)")


@cli_command("show-buffer")(_configure_buffer_name)
def show_buffer(client: Any, args: argparse.Namespace) -> int:
    buffer = client.call("list-buffers", "buffer-list", name=args.name, text=True).buffers[0]
    sys.stdout.write(buffer.text)
    return 0


@cli_command("delete-buffer")(_configure_buffer_name)
def delete_buffer(client: Any, args: argparse.Namespace) -> int:
    client.call("delete-buffer", "ok", name=args.name)
    return 0


def _configure_set_buffer(p: argparse.ArgumentParser) -> None:
    _configure_buffer_name(p)
    p.add_argument("-a", dest="append", action="store_true", help="append to the buffer")
    p.add_argument("-n", dest="new_name", metavar="NEW", help="rename the buffer instead")
    p.add_argument("data", nargs="?", help="the text")


@cli_command("set-buffer")(_configure_set_buffer)
def set_buffer(client: Any, args: argparse.Namespace) -> int:
    if args.data is None and args.new_name is None:
        raise BadRequest("no data specified")
    client.call("set-buffer", "ok", name=args.name, text=args.data or "", append=args.append,
                new_name=args.new_name)
    return 0


def _file_error(path: str, exc: OSError) -> MuxdError:
    """tmux's one line for a file it cannot read or write: "PATH: No such file or directory"."""
    kind = NotFound if isinstance(exc, FileNotFoundError) else Forbidden if isinstance(exc, PermissionError) else BadRequest
    return kind(f"{path}: {exc.strerror or exc}")


def _configure_load_buffer(p: argparse.ArgumentParser) -> None:
    _configure_buffer_name(p)
    p.add_argument("path", help="the file to read (- reads standard input)")


@cli_command("load-buffer")(_configure_load_buffer)
def load_buffer(client: Any, args: argparse.Namespace) -> int:
    # Read here, not by the daemon: a relative path is the caller's, and - is the caller's stdin.
    try:
        if args.path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.path, "rb") as file:
                data = file.read()
    except OSError as exc:
        raise _file_error(args.path, exc) from None
    text = data.decode("utf-8", errors="replace")  # buffers hold text: bytes that are not UTF-8 become U+FFFD
    if len(text) > PASTE_BUFFER_MAX_CHARS:
        raise BadRequest(f"{args.path}: too large for a buffer (at most {PASTE_BUFFER_MAX_CHARS} characters)")
    client.call("set-buffer", "ok", name=args.name, text=text)
    return 0


def _configure_save_buffer(p: argparse.ArgumentParser) -> None:
    _configure_buffer_name(p)
    p.add_argument("-a", dest="append", action="store_true", help="append to the file")
    p.add_argument("path", help="the file to write (- writes standard output)")


@cli_command("save-buffer")(_configure_save_buffer)
def save_buffer(client: Any, args: argparse.Namespace) -> int:
    buffer = client.call("list-buffers", "buffer-list", name=args.name, text=True).buffers[0]
    data = buffer.text.encode()
    if args.path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    try:
        with open(args.path, "ab" if args.append else "wb") as file:
            file.write(data)
    except OSError as exc:
        raise _file_error(args.path, exc) from None
    return 0


def _configure_paste_buffer(p: argparse.ArgumentParser) -> None:
    _configure_buffer_name(p)
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-d", dest="delete", action="store_true", help="delete the buffer after pasting")
    p.add_argument("-p", dest="bracketed", action="store_true",
                   help="in bracketed-paste markers, if the pane's program asked for them")
    p.add_argument("-r", dest="raw", action="store_true", help="keep line feeds (default: carriage returns)")
    p.add_argument("-s", dest="separator", metavar="SEP", help="what replaces each line feed")


@cli_command("paste-buffer")(_configure_paste_buffer)
def paste_buffer(client: Any, args: argparse.Namespace) -> int:
    client.call("paste-buffer", "ok", target=args.target, name=args.name, delete=args.delete,
                bracketed=args.bracketed, raw=args.raw, separator=args.separator)
    return 0


def _configure_pipe_pane(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", help="target pane")
    p.add_argument("-O", dest="output", action="store_true", help="the pane's output to the command (default)")
    p.add_argument("-I", dest="input", action="store_true", help="the command's output into the pane, as typed")
    p.add_argument("-o", dest="only_if_none", action="store_true",
                   help="open only if the pane has no pipe (so one key toggles it)")
    p.add_argument("command", nargs="?", default="", help="a shell command; none closes the pane's pipe")


@cli_command("pipe-pane")(_configure_pipe_pane)
def pipe_pane(client: Any, args: argparse.Namespace) -> int:
    client.call("pipe-pane", "ok", target=args.target, command=args.command,
                output=args.output or not args.input, input=args.input, only_if_none=args.only_if_none)
    return 0
