"""The terminal `muxd top` runs in: keys read one at a time without echo (Ctrl-C a key like
any other, so top leaves the terminal as it found it), the alternate screen, the cursor hidden,
and frames painted by rewriting only the lines that changed since the last one. `close()`
restores it all, whatever ended top.
"""

from __future__ import annotations

import os
import termios
import tty

from muxd.daemon.client_side.input_parser import InputParser, Key, Paste, Text

ENTER_SCREEN = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
LEAVE_SCREEN = "\x1b[0m\x1b[?25h\x1b[?1049l"
# Keys as top names them: arrows in both cursor-key modes, Enter as CR or LF, Ctrl-C as q.
KEY_NAMES = {b"\x1b[A": "up", b"\x1bOA": "up", b"\x1b[B": "down", b"\x1bOB": "down", b"k": "up", b"j": "down",
             b"\r": "enter", b"\n": "enter", b"\x03": "quit", b"q": "quit", b"y": "yes", b"n": "no",
             b"e": "execution"}


class TopTerminal:
    def __init__(self, fd_in: int = 0, fd_out: int = 1) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self._saved: list | None = None
        self._shown: list[str] = []  # the lines on screen now
        self._parser = InputParser()

    def open(self) -> None:
        self._saved = termios.tcgetattr(self.fd_in)
        tty.setcbreak(self.fd_in, termios.TCSANOW)
        mode = termios.tcgetattr(self.fd_in)
        mode[3] &= ~termios.ISIG  # Ctrl-C comes as a key: top quits through its own way out
        termios.tcsetattr(self.fd_in, termios.TCSANOW, mode)
        self._write(ENTER_SCREEN)

    def close(self) -> None:
        if self._saved is None:
            return
        self._write(LEAVE_SCREEN)
        termios.tcsetattr(self.fd_in, termios.TCSADRAIN, self._saved)
        self._saved = None

    def size(self) -> tuple[int, int]:
        size = os.get_terminal_size(self.fd_out)
        return size.columns, size.lines

    def invalidate(self) -> None:
        """The next paint rewrites every line (the terminal was resized, or something else drew)."""
        self._shown = []

    def paint(self, lines: list[str]) -> None:
        """Show `lines` (one per row from the top): only those that differ from what is shown are written."""
        out = []
        if len(lines) != len(self._shown):
            out.append("\x1b[H\x1b[2J")
            self._shown = [""] * len(lines)
        for row, (line, shown) in enumerate(zip(lines, self._shown)):
            if line != shown:
                out.append(f"\x1b[{row + 1};1H{line}\x1b[0m\x1b[K")
        self._shown = list(lines)
        if out:
            self._write("".join(out))

    def keys(self) -> list[str]:
        """The keys typed since the last call, as KEY_NAMES names them ("" for any other)."""
        try:
            data = os.read(self.fd_in, 4096)
        except BlockingIOError:
            return []
        if not data:
            return ["quit"]  # the terminal went away
        names = []
        for token in self._parser.feed(data):
            if isinstance(token, Text):
                names += [KEY_NAMES.get(bytes([b]), "") for b in token.data]
            elif isinstance(token, Key):
                names.append(KEY_NAMES.get(token.data, ""))
            elif isinstance(token, Paste):
                names.append("")
        return names

    def _write(self, text: str) -> None:
        data = text.encode()
        while data:
            data = data[os.write(self.fd_out, data):]
