"""tmux's control mode (`tmux -C`), read sans-IO: bytes in, events out. No asyncio here.

A control client's output is lines. Replies to the commands it sent are framed
`%begin TIME NUMBER FLAGS` … `%end|%error TIME NUMBER FLAGS` (FLAGS 1: sent by this client; the
attach command that started it answers with FLAGS 0). Between replies come notifications, one
line each: `%output %ID BYTES` (bytes below space and backslash written as `\\ooo`),
`%layout-change @ID LAYOUT …`, `%window-add @ID`, `%window-close @ID`, `%exit`, … tmux keeps the
two in order: a pane's output block is queued before tmux parses it, so a reply reflects exactly
the output notified before it (control.c, window.c in tmux 3.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Output:
    pane: str    # tmux's pane id, "%3"
    data: bytes


@dataclass(frozen=True)
class Reply:
    lines: list[bytes]
    error: bool = False  # %error: the command failed, `lines` say why
    ours: bool = True    # sent by this client (FLAGS 1), not the attach that started it

    def text(self) -> str:
        return b"\n".join(self.lines).decode("utf-8", "replace")


@dataclass(frozen=True)
class Notification:
    name: str                      # "layout-change", "window-add", "exit", … (without the %)
    args: list[str] = field(default_factory=list)


Event = Output | Reply | Notification

_OCTAL = re.compile(rb"\\([0-7]{3})")


def unescape_output(escaped: bytes) -> bytes:
    """The bytes of a `%output` line's payload."""
    if b"\\" not in escaped:
        return escaped
    return _OCTAL.sub(lambda m: bytes((int(m.group(1), 8) & 0xFF,)), escaped)


class ControlParser:
    """Feed it what the control client writes; get the events of every complete line."""

    def __init__(self) -> None:
        self._partial = b""
        self._block: list[bytes] | None = None  # the body of the reply being read
        self._block_key = b""                   # "TIME NUMBER FLAGS" of its %begin

    def feed(self, data: bytes) -> list[Event]:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        events: list[Event] = []
        for line in lines:
            event = self._line(line.removesuffix(b"\r"))
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: bytes) -> Event | None:
        if self._block is not None:
            # Inside a reply anything goes (a captured screen may show "%output"), up to its own end.
            word, _, key = line.partition(b" ")
            if word in (b"%end", b"%error") and key == self._block_key:
                body, self._block = self._block, None
                return Reply(body, error=word == b"%error", ours=key.endswith(b" 1"))
            self._block.append(line)
            return None
        if line.startswith(b"%output "):
            _, pane, payload = (line.split(b" ", 2) + [b""])[:3]
            return Output(pane.decode("ascii", "replace"), unescape_output(payload))
        if line.startswith(b"%begin "):
            self._block, self._block_key = [], line[len(b"%begin "):]
            return None
        if line.startswith(b"%"):
            words = line[1:].decode("utf-8", "replace").split(" ")
            return Notification(words[0], words[1:])
        return None  # nothing else is written outside a reply


# ---------------------------------------------------------------- layouts

@dataclass(frozen=True)
class PaneGeometry:
    pane: str     # "%3"
    columns: int
    lines: int


_CELL = re.compile(r"(\d+)x(\d+),\d+,\d+(?:,(\d+))?")


def layout_panes(layout: str) -> list[PaneGeometry]:
    """The panes of a tmux layout string (`b25f,80x24,0,0,2` or nested `{…}` / `[…]`) and their
    sizes. A leaf is `WxH,X,Y,ID`; a split is `WxH,X,Y` followed by its children in brackets."""
    _, _, body = layout.partition(",")  # the checksum first
    # A split's own cell has no ID: its children follow in brackets.
    return [PaneGeometry(f"%{m.group(3)}", int(m.group(1)), int(m.group(2)))
            for m in _CELL.finditer(body) if m.group(3) is not None]


def quote(argument: str) -> str:
    """`argument` as one word of a tmux command line (sent to a control client)."""
    return "'" + argument.replace("'", "'\\''") + "'"
