"""Copy mode of a pane: how far back into its scrollback the attached clients look.

Pure: the state is one offset per pane (0 = the live screen), shared by every client of the
session as in tmux (the mode belongs to the pane, not to a client).
"""

from __future__ import annotations

from dataclasses import dataclass

WHEEL_SCROLL_LINES = 3  # tmux scrolls five; three feels closer to a plain terminal

_UP = (b"\x1b[A", b"\x1bOA", b"k", b"\x19")
_DOWN = (b"\x1b[B", b"\x1bOB", b"j", b"\x05")
_PAGE_UP = (b"\x1b[5~", b"\x02")
_PAGE_DOWN = (b"\x1b[6~", b"\x06")
_LEAVE = (b"q", b"\x1b", b"\x03")


@dataclass
class CopyMode:
    offset: int = 0

    def scroll(self, lines: int, history: int) -> None:
        """Positive `lines` goes back in time; clamped to [0, history]."""
        self.offset = min(max(self.offset + lines, 0), history)

    def key(self, key: bytes, *, history: int, page: int) -> bool:
        """Apply one key; False means leave copy mode."""
        if key in _LEAVE:
            return False
        if key in _UP:
            self.scroll(1, history)
        elif key in _DOWN:
            self.scroll(-1, history)
        elif key in _PAGE_UP:
            self.scroll(max(1, page - 1), history)
        elif key in _PAGE_DOWN:
            self.scroll(-max(1, page - 1), history)
        elif key == b"g":
            self.offset = history
        elif key == b"G":
            self.offset = 0
        return True

    def wheel(self, direction: int, history: int) -> bool:
        """A wheel notch (-1 up, +1 down); False when scrolled down past the bottom: leave."""
        if direction > 0 and self.offset <= 0:
            return False
        self.scroll(-direction * WHEEL_SCROLL_LINES, history)
        return not (direction > 0 and self.offset == 0)
