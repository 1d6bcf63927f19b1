"""Reading a file of muxd commands, as tmux reads its config: one command a line, `#` starts a
comment, a line ending in `\\` goes on on the next, words are quoted as in the shell, and `;`
(alone, or `\\;`) separates commands on one line — but for bind-key a `\\;` is part of the
command it binds (`bind-key r source-file F \\; display-message done` binds both), as in
tmux. Pure: text in, command lines out."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_ESCAPED_SEPARATOR = re.compile(r"(?<=\s)\\;(?=\s|$)")  # a `\;` word
_KEPT_SEPARATOR = "\0;"  # what it reads as until the words are split: no shell quoting changes it
_BINDS = ("bind-key", "bind")


@dataclass(frozen=True)
class CommandLine:
    line: int          # where it starts in the file, from 1
    words: list[str]   # empty when the line could not be read: `error` says why
    error: str = ""


def command_lines(text: str) -> list[CommandLine]:
    commands: list[CommandLine] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        trailing = len(raw) - len(raw.rstrip("\\"))
        if trailing % 2 == 1:  # an unescaped backslash at the end: the command goes on
            pending += raw[:-1] + " "
            continue
        source, pending = pending + raw, ""
        commands += _split(start, source)
    if pending:
        commands += _split(start, pending)
    return commands


def _split(line: int, source: str) -> list[CommandLine]:
    try:
        words = shlex.split(_ESCAPED_SEPARATOR.sub(_KEPT_SEPARATOR, source), comments=True)
    except ValueError as exc:  # an unclosed quote
        return [CommandLine(line, [], f"syntax error: {str(exc).lower()}")]
    commands: list[CommandLine] = []
    current: list[str] = []
    for word in words:
        if word == ";" or (word == _KEPT_SEPARATOR and current[:1] and current[0] not in _BINDS):
            if current:
                commands.append(CommandLine(line, current))
            current = []
        else:
            # inside quotes a `\;` was the two characters it is
            current.append(";" if word == _KEPT_SEPARATOR else word.replace(_KEPT_SEPARATOR, "\\;"))
    if current:
        commands.append(CommandLine(line, current))
    return commands
