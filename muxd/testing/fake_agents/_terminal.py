"""The fake agents' side of their pty: its size, whole-frame redraws as TUIs make them,
plain output for line-based CLIs, animations on a fixed frame clock, and line input."""

from __future__ import annotations

import codecs
import os
import sys
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from muxd.testing.fake_agents._layout import tail

FRAME_INTERVAL_S = 0.1
FALLBACK_SIZE = (80, 24)
_ENTER = (b"\r", b"\n")
_ERASE = (b"\x7f", b"\x08")
_KILL_LINE = b"\x15"
_CANCEL = (b"\x1b", b"\x03")
CANCELLED = "\x1b"  # what read_line(cancellable=True) returns for Escape or C-c

Frame = Callable[[int, float], list[str]]  # (frame number, seconds since start) -> rows


class Terminal:
    """Standard input and output, which the pane's pty is."""

    fd_in = 0
    enters_to_swallow = 0  # Enters after typed text taken as part of the typing (read_line)

    @property
    def columns(self) -> int:
        return self._size()[0]

    @property
    def rows(self) -> int:
        return self._size()[1]

    def _size(self) -> tuple[int, int]:
        try:
            size = os.get_terminal_size(sys.stdout.fileno())
        except OSError:
            return FALLBACK_SIZE
        return size.columns or FALLBACK_SIZE[0], size.lines or FALLBACK_SIZE[1]

    def write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def draw(self, rows: list[str]) -> None:
        """Redraw the whole screen as `rows` (the last ones, if more than fit). Each row is
        overwritten in place rather than after a clear, so no frame is ever caught blank."""
        shown = [row[:self.columns] for row in tail(rows, self.rows)]
        # A full row needs no erasing after it, and must not have it: at the last column EL
        # would erase the row's last character, as on any terminal.
        ends = ["\x1b[K" if len(row) < self.columns else "" for row in shown]
        self.write("\x1b[H" + "\r\n".join(row + end for row, end in zip(shown, ends, strict=True)) + "\x1b[J")

    def animate(self, seconds: float, frame: Frame) -> None:
        """Draw `frame(n, elapsed)` as the whole screen every FRAME_INTERVAL_S for `seconds`."""
        self.tick(seconds, lambda number, elapsed: self.draw(frame(number, elapsed)))

    def tick(self, seconds: float, step: Callable[[int, float], None]) -> None:
        """Call `step(n, elapsed)` every FRAME_INTERVAL_S for `seconds`."""
        start = time.monotonic()
        number = 0
        while (elapsed := time.monotonic() - start) < seconds:
            step(number, elapsed)
            number += 1
            time.sleep(FRAME_INTERVAL_S)

    def read_line(self, *, echo: bool = False, cancellable: bool = False) -> str:
        """One line of input, stripped; with `echo`, drawn as it is typed (as a line editor
        does); EOF reads as `quit`."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = ""
        while True:
            byte = os.read(self.fd_in, 1)
            if not byte:
                return "quit"
            if byte in _ENTER:
                if text and self.enters_to_swallow > 0:  # as Codex takes an Enter inside a paste burst
                    self.enters_to_swallow -= 1
                    continue
                if echo:
                    self.write("\r\n")
                return text.strip()
            if cancellable and byte in _CANCEL:  # Escape / C-c at a question: the CLIs take it as "no"
                return CANCELLED
            if byte == _KILL_LINE:  # C-u, as line editors take it (muxd empties the box with it)
                if echo and text:
                    self.write("\b \b" * len(text))
                text = ""
                continue
            if byte in _ERASE:
                if text:
                    text = text[:-1]
                    if echo:
                        self.write("\b \b")
                continue
            char = decoder.decode(byte)
            text += char
            if echo and char:
                self.write(char)

    @contextmanager
    def keys(self) -> Iterator[None]:
        """Keys one by one with the pty's echo off: the agent draws its own input."""
        try:
            saved = termios.tcgetattr(self.fd_in)
        except termios.error:  # not a terminal (a pipe in a unit test): nothing to set
            yield
            return
        quiet = list(saved)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(self.fd_in, termios.TCSANOW, quiet)
        try:
            yield
        finally:
            termios.tcsetattr(self.fd_in, termios.TCSANOW, saved)

