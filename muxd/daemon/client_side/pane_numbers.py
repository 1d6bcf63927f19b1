"""`C-b q`: tmux's display-panes. Each pane's number (its index, as `list-panes` shows it)
is drawn in big digits over its middle for a second (the active pane's in red, the others'
in blue); a digit pressed meanwhile selects that pane (`a`..`z` for panes 10 to 35). Any other
key takes the numbers away and then does what it does."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import TYPE_CHECKING

from muxd.config import DISPLAY_PANES_S
from muxd.daemon.client_side.session_actions import make_active
from muxd.daemon.panes.registry import Window
from muxd.emulator.cell import Cell

if TYPE_CHECKING:
    from muxd.attach.frame import Frame, FrameRow
    from muxd.daemon.client_side.client import Client
    from muxd.daemon.panes.pane import Pane

ACTIVE_COLOUR = "red"   # tmux's display-panes-active-colour
OTHER_COLOUR = "blue"   # tmux's display-panes-colour
_FONT_LINES = 5
# Digits 3 dots wide and 5 high; a dot is drawn two cells wide so it looks square.
_FONT = {
    "0": ("###", "# #", "# #", "# #", "###"), "1": ("  #", "  #", "  #", "  #", "  #"),
    "2": ("###", "  #", "###", "#  ", "###"), "3": ("###", "  #", "###", "  #", "###"),
    "4": ("# #", "# #", "###", "  #", "  #"), "5": ("###", "#  ", "###", "  #", "###"),
    "6": ("###", "#  ", "###", "# #", "###"), "7": ("###", "  #", "  #", "  #", "  #"),
    "8": ("###", "# #", "###", "# #", "###"), "9": ("###", "# #", "###", "  #", "###"),
}
_DIGIT_COLUMNS = 8  # 3 dots of 2 cells, and 2 cells of space


def pane_index_of_key(key: bytes) -> int | None:
    """The pane index a key names while the numbers show: 0-9, then a-z for 10-35; None for
    any other key."""
    char = key.decode("latin-1") if len(key) == 1 else ""
    if "0" <= char <= "9":
        return int(char)
    if "a" <= char <= "z":
        return 10 + ord(char) - ord("a")
    return None


class PaneNumbers:
    def __init__(self, window: Window, until: float, base: int = 0) -> None:
        self.window = window
        self.until = until
        self.base = base  # the window's pane-base-index: the number of its first pane

    @classmethod
    def shown(cls, client: Client) -> PaneNumbers | None:
        window = client.session.active_window
        if window is None:
            return None
        asyncio.get_running_loop().call_later(DISPLAY_PANES_S, client.wake)  # to take them away
        base = client.daemon.registry.pane_base(window)
        return cls(window, time.monotonic() + DISPLAY_PANES_S, base)

    def live(self) -> bool:
        return time.monotonic() < self.until and self.window in self.window.session.windows

    def key(self, key: bytes) -> bool:
        """True when the key was a pane number (the pane, if there is one, is now active)."""
        index = pane_index_of_key(key)
        if index is None:
            return False
        if 0 <= index - self.base < len(self.window.panes):  # none: the key is spent all the same, as in tmux
            make_active(self.window, self.window.panes[index - self.base])
        return True

    def drawn(self, frame: Frame, placements: list[tuple[Pane, int, int, int, int]]) -> Frame:
        """`frame` with each placed pane's number over its middle."""
        rows = list(frame.rows)
        area_lines = len(rows) - 1 if len(rows) > 1 else len(rows)
        for pane, x, y, width, height in placements:
            if pane not in self.window.panes:
                continue
            width, height = min(width, frame.columns - x), min(height, area_lines - y)
            if width < 1 or height < 1:  # off this client's screen (a bigger one sized the window)
                continue
            colour = ACTIVE_COLOUR if pane is self.window.active_pane else OTHER_COLOUR
            text = str(self.window.panes.index(pane) + self.base)
            big = height >= _FONT_LINES and width >= len(text) * _DIGIT_COLUMNS
            glyphs = _big_lines(text) if big else [text]
            top = y + (height - len(glyphs)) // 2
            for n, glyph in enumerate(glyphs):
                left = x + max(0, (width - len(glyph)) // 2)
                cells = [Cell(" ", bg=colour) if big and ch == "#" else
                         Cell(ch, fg="white", bg=colour) if not big else None for ch in glyph]
                rows[top + n] = _overlaid(rows[top + n], left, cells[:width])
        return dataclasses.replace(frame, rows=tuple(rows))


def _big_lines(text: str) -> list[str]:
    """The rows of `text` in the big font, a `#` per coloured cell."""
    return ["  ".join("".join(dot * 2 for dot in _FONT[digit][line]) for digit in text)
            for line in range(_FONT_LINES)]


def _overlaid(row: FrameRow, left: int, cells: list[Cell | None]) -> FrameRow:
    """`row` with `cells` from column `left` (None: leave that cell as it was)."""
    out = list(row)
    for at, cell in enumerate(cells, start=left):
        if cell is not None and 0 <= at < len(out):
            if out[at].data == "" and at > 0:  # the right half of a wide character: blank both
                out[at - 1] = Cell(" ")
            out[at] = cell
            if at + 1 < len(out) and out[at + 1].data == "":
                out[at + 1] = Cell(" ")
    return tuple(out)
