"""Shell prompt marks (OSC 133, "semantic prompts") read from a pane's raw output. Sans-IO.

A shell with integration writes `ESC ] 133 ; A` where its prompt starts, `B` where the typed
command starts, `C` (optionally `;cmdline_url=<percent-encoded command>`) when the command
starts to run and `D ; <exit status>` when it is done. muxd's own bash panes get a small
integration (shell_integration.py); zsh/fish users' own integrations are read the same way.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import msgspec

_INTRO = b"\x1b]133;"
# The longest mark muxd reads: a command line beyond this is cut (the mark still counts).
MARK_MAX_BYTES = 8192
_MARK = re.compile(rb"\x1b\]133;([ABCD])((?:;[^\x07\x1b]*)?)(?:\x07|\x1b\\)")


class PromptMark(msgspec.Struct, frozen=True):
    kind: str                    # "A" prompt, "B" command typed, "C" running, "D" done
    exit_code: int | None = None  # D
    command: str | None = None    # C, when the shell says it


def _parse(kind: bytes, params: bytes) -> PromptMark:
    fields = params.decode("utf-8", "replace").split(";")[1:] if params else []
    if kind == b"D":
        code = fields[0] if fields else ""
        return PromptMark("D", exit_code=int(code) if code.lstrip("-").isdigit() else None)
    command = None
    for field in fields:
        key, _, value = field.partition("=")
        if key == "cmdline_url":
            command = unquote(value)
        elif key == "cmdline":
            command = value
    return PromptMark(kind.decode(), command=command)


class PromptMarkScanner:
    """Feed raw output chunks; get the marks they complete. A mark split across chunks is kept
    (up to MARK_MAX_BYTES) until its end arrives."""

    def __init__(self) -> None:
        self._tail = b""
        self.seen = False  # the program has written a mark: its shell is integrated

    def feed(self, data: bytes) -> list[PromptMark]:
        if self._tail:
            data = self._tail + data
            self._tail = b""
        marks: list[PromptMark] = []
        position = data.find(_INTRO)
        while position >= 0:
            match = _MARK.match(data, position)
            if match is None:
                end = data.find(b"\x07", position)
                end_st = data.find(b"\x1b\\", position)
                if end < 0 and end_st < 0 and len(data) - position <= MARK_MAX_BYTES:
                    self._tail = data[position:]  # not complete yet
                    break
                position = data.find(_INTRO, position + 1)
                continue
            marks.append(_parse(match.group(1), match.group(2)))
            position = data.find(_INTRO, match.end())
        if not self._tail:
            # Keep a possible start of an intro split across chunks ("\x1b]13").
            cut = data.rfind(b"\x1b", max(0, len(data) - len(_INTRO) + 1))
            if cut >= 0 and _INTRO.startswith(data[cut:]):
                self._tail = data[cut:]
        if marks:
            self.seen = True
        return marks
