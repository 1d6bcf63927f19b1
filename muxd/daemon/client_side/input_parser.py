"""Splitting what an attached client's terminal sends into keys, mouse reports and pastes
(and mouse reports encoded back for a program that asked for them).

Sans-IO: `InputParser().feed(bytes) -> list[Text | Key | Mouse | Paste]`. Plain bytes (no
ESC) come as runs, whole UTF-8 characters each: a paste outside bracketed-paste mode is one
`Text`, not an object per byte; `next_key_bytes` cuts a run where keys must be seen alone.
The outer terminal sends whole sequences in one write, so an incomplete one at the end of a
chunk is kept for the next; a lone ESC at the end of a chunk is the Escape key (tmux waits
escape-time for it; the client's read already groups a sequence, so we need not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ESC = 0x1B
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
# A paste longer than this is passed on in pieces rather than held whole.
PASTE_MAX_HELD_BYTES = 1024 * 1024
_SGR_MOUSE = re.compile(rb"\x1b\[<(\d{1,4});(\d{1,5});(\d{1,5})([Mm])")
WHEEL_UP = 64
WHEEL_DOWN = 65
MOTION = 32  # the button bit of a move (with a button held, under mode 1002: a drag)


@dataclass(frozen=True)
class Text:
    data: bytes  # a run of plain keys (no ESC), whole UTF-8 characters, e.g. b"ls -l\r"


@dataclass(frozen=True)
class Key:
    data: bytes  # the bytes of one key, e.g. b"a", b"\x02", b"\x1b[A", b"\x1bx"


@dataclass(frozen=True)
class Mouse:
    """An SGR mouse report; x and y are 0-based cells of the client screen."""

    button: int   # the raw Cb: 0-2 buttons, +32 motion, 64/65 wheel, +4/+8/+16 modifiers
    x: int
    y: int
    release: bool

    @property
    def wheel(self) -> int:
        """-1 wheel up, +1 wheel down, 0 not a wheel event."""
        base = self.button & ~(4 | 8 | 16)
        return -1 if base == WHEEL_UP else 1 if base == WHEEL_DOWN else 0


@dataclass(frozen=True)
class Paste:
    data: bytes  # the pasted text, without the bracketed-paste markers


Token = Text | Key | Mouse | Paste


def _csi_end(data: bytes, start: int) -> int | None:
    """Index just past the CSI sequence starting at `start` (ESC [), None if incomplete."""
    for index in range(start + 2, len(data)):
        if 0x40 <= data[index] <= 0x7E:
            return index + 1
    return None


def _utf8_length(lead: int) -> int:
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


def _incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of `data` begin a UTF-8 character that is not all there."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:  # a lead byte: is its character complete?
            return back if _utf8_length(byte) > back else 0
    return 0


def next_key_bytes(data: bytes) -> int:
    """The length of the first key of a plain run: one UTF-8 character."""
    return min(_utf8_length(data[0]), len(data))


class InputParser:
    def __init__(self) -> None:
        self._pending = b""
        self._paste: bytearray | None = None  # inside a bracketed paste

    def feed(self, data: bytes) -> list[Token]:
        data = self._pending + data
        self._pending = b""
        tokens: list[Token] = []
        index = 0
        while index < len(data):
            if self._paste is not None:
                index = self._feed_paste(data, index, tokens)
                continue
            if data[index] != ESC:
                end = data.find(ESC, index)
                if end < 0:  # the run reaches the end of the chunk: its last character may not
                    end = len(data) - _incomplete_tail(data)
                    self._pending = data[end:]
                if end > index:
                    tokens.append(Text(data[index:end]))
                if self._pending:
                    break
                index = end
                continue
            end = self._escape_end(data, index)
            if end is None:
                self._pending = data[index:]
                break
            sequence = data[index:end]
            index = end
            if sequence == PASTE_START:
                self._paste = bytearray()
                continue
            mouse = _SGR_MOUSE.fullmatch(sequence)
            if mouse is not None:
                tokens.append(Mouse(int(mouse[1]), max(0, int(mouse[2]) - 1),
                                    max(0, int(mouse[3]) - 1), mouse[4] == b"m"))
                continue
            tokens.append(Key(sequence))
        return tokens

    def _escape_end(self, data: bytes, index: int) -> int | None:
        if index + 1 >= len(data):
            return index + 1  # a lone ESC ending the chunk: the Escape key
        follower = data[index + 1]
        if follower == ord("["):
            if data[index + 2:index + 3] == b"M":  # X10 mouse: ESC [ M and three bytes
                return index + 6 if index + 6 <= len(data) else None
            return _csi_end(data, index)
        if follower == ord("O"):
            return index + 3 if index + 3 <= len(data) else None
        if follower == ESC:
            return index + 1
        return index + 1 + _utf8_length(follower)  # Meta + key

    def _feed_paste(self, data: bytes, index: int, tokens: list[Token]) -> int:
        assert self._paste is not None
        end = data.find(PASTE_END, index)
        if end < 0:
            # Keep a possible start of the end marker for the next chunk.
            keep = next((k for k in range(min(len(PASTE_END) - 1, len(data) - index), 0, -1)
                         if PASTE_END.startswith(data[len(data) - k:])), 0)
            self._paste += data[index:len(data) - keep]
            self._pending = data[len(data) - keep:] if keep else b""
            if len(self._paste) > PASTE_MAX_HELD_BYTES:
                tokens.append(Paste(bytes(self._paste)))
                self._paste = bytearray()
            return len(data)
        self._paste += data[index:end]
        tokens.append(Paste(bytes(self._paste)))
        self._paste = None
        return end + len(PASTE_END)


def encode_mouse(event: Mouse, x: int, y: int, *, sgr: bool) -> bytes:
    """The report a program that enabled mouse tracking expects, in pane coordinates."""
    if sgr:
        return f"\x1b[<{event.button};{x + 1};{y + 1}{'m' if event.release else 'M'}".encode()
    button = 3 if event.release and not event.wheel else event.button
    if x > 222 or y > 222:
        return b""  # the legacy encoding cannot say it
    return bytes((0x1B, 0x5B, 0x4D, 32 + button, 33 + x, 33 + y))
