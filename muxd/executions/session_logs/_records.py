"""Pieces every session-log parser needs: whole JSONL records out of appended bytes (each line
bounded in length and nesting before it is decoded), a tool call rendered as `Name(main
argument)`, and the files an apply_patch text touches."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from muxd.config import SESSION_LOG_JSON_DEPTH_MAX, SESSION_LOG_LINE_MAX_BYTES
from muxd.json_depth import nests_deeper

# A tool call's argument is cut to this many characters (its first line only) for display.
CALL_ARGUMENT_MAX_CHARS = 160
# The argument that says what a call does, by tool-agnostic key, most telling first: a shell
# command, then a file, then a search, then a description.
MAIN_ARGUMENT_KEYS = ("command", "cmd", "file_path", "notebook_path", "absolute_path", "path", "pattern",
                      "url", "query", "description", "prompt")
# Shells whose `-c`/`-lc` script is the command a person would recognise.
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})
# `*** Add File: path`, `*** Update File: path`, `*** Move to: path` (apply_patch's format).
_PATCH_TARGET = re.compile(r"^\*\*\* (?:Add File|Update File|Move to): (.+?)\s*$", re.MULTILINE)

_decoder = msgspec.json.Decoder()


def jsonl_records(data: bytes) -> Iterator[dict[str, Any]]:
    """Each complete line of `data` that is a JSON object. A last line without its newline is
    still being written, so it is left for the next read; a line that is not JSON (a torn
    write, a foreign line) is skipped rather than failing the whole turn."""
    end = data.rfind(b"\n")
    if end < 0:
        return
    for line in data[:end].split(b"\n"):
        if line.strip() and isinstance(record := json_value(line), dict):
            yield record


def json_value(text: bytes | str) -> Any:
    """`text` decoded as JSON; None if it is not JSON, is longer than SESSION_LOG_LINE_MAX_BYTES
    or nests deeper than SESSION_LOG_JSON_DEPTH_MAX (checked first: the decoder recurses)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(data) > SESSION_LOG_LINE_MAX_BYTES or nests_deeper(data, SESSION_LOG_JSON_DEPTH_MAX):
        return None
    try:
        return _decoder.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


def mapping(value: object) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one: logs change shape between versions."""
    return value if isinstance(value, dict) else {}


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def render_call(name: str, args: object) -> str:
    """`Name(main argument)`: `Bash(mkdir -p demo)`, `Write(/path/file.txt)`, `Name()` if none."""
    argument = main_argument(args)
    return f"{name}({_shorten(argument)})" if argument is not None else f"{name}()"


def main_argument(args: object) -> str | None:
    """The argument that says what a call does: a known key first, else the first string."""
    fields = mapping(args)
    for key in MAIN_ARGUMENT_KEYS:
        if key in fields and (value := _as_text(fields[key])):
            return value
    return next((value for value in fields.values() if isinstance(value, str) and value), None)


def _as_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        # ["bash", "-lc", "script"] is the script; any other argv is shown as a command line.
        if len(value) == 3 and value[0] in _SHELLS and value[1] in ("-c", "-lc"):
            return str(value[2])
        return shlex.join(value)
    return None


def _shorten(argument: str) -> str:
    lines = argument.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > CALL_ARGUMENT_MAX_CHARS:
        return first[:CALL_ARGUMENT_MAX_CHARS - 1] + "…"
    return first + (" …" if len(lines) > 1 else "")


def patch_paths(patch: str) -> list[str]:
    """The files an apply_patch text adds, updates or moves to, in order, once each."""
    return unique(_PATCH_TARGET.findall(patch))


def unique(items: Iterable[str]) -> list[str]:
    """`items` in order, each once."""
    return list(dict.fromkeys(items))


def joined(texts: Iterable[str]) -> str | None:
    """Answer blocks as a person read them, one paragraph each; None when there were none."""
    parts = [t for t in texts if t.strip()]
    return "\n\n".join(parts) if parts else None
