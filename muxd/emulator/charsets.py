"""DEC character sets: G0/G1 designation (`ESC ( c`, `ESC ) c`), SO/SI, and VT100 line drawing.

Programs draw boxes this way under TERM=xterm-256color (ncurses' smacs/acsc): they put the
DEC special graphics set in G0 (`ESC ( 0`), or in G1 and shift to it with SO, then send
ASCII, so "lqqk" is a corner, two lines and a corner. Cells keep the glyphs themselves
(┌──┐): captures, detectors and attached clients then show what a terminal shows.
As in xterm and tmux, DECSC saves the designations and the shift with the cursor (pyte's
`Savepoint` holds them), DECRC without a DECSC and RIS bring back ASCII in G0 and G1.
"""

from __future__ import annotations

from typing import Any

ASCII = "B"
DEC_SPECIAL_GRAPHICS = "0"

# What 0x60-0x7E show in the DEC special graphics set (VT100; xterm's and ghostty's glyphs).
LINE_DRAWING: dict[int, str] = str.maketrans(
    "`abcdefghijklmnopqrstuvwxyz{|}~",
    "◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·",
)


class CharsetShifts:
    """Which set text is drawn in; expects to be mixed into a `pyte.Screen`, before it.

    `translation` is the table drawn text goes through, None while the set in use is ASCII.
    """

    g0_charset: str
    g1_charset: str
    charset: int  # 0: G0 in use (SI), 1: G1 (SO)
    savepoints: list[Any]
    translation: dict[int, str] | None = None

    def define_charset(self, code: str, mode: str) -> None:
        if code not in (ASCII, DEC_SPECIAL_GRAPHICS):
            return  # tmux knows only these two: other designations leave the set as it was
        if mode == "(":
            self.g0_charset = code
        elif mode == ")":
            self.g1_charset = code
        self._select_translation()

    def shift_out(self) -> None:
        self.charset = 1
        self._select_translation()

    def shift_in(self) -> None:
        self.charset = 0
        self._select_translation()

    def reset(self) -> None:
        super().reset()  # type: ignore[misc]
        self._reset_charsets()

    def restore_cursor(self, *params: int) -> None:
        saved = bool(self.savepoints)
        super().restore_cursor(*params)  # type: ignore[misc]
        if not saved:
            self._reset_charsets()
        self._select_translation()

    def _reset_charsets(self) -> None:
        # pyte starts G1 as line drawing (as the Linux console does); xterm and tmux use ASCII.
        self.g0_charset = self.g1_charset = ASCII
        self.charset = 0
        self._select_translation()

    def _select_translation(self) -> None:
        in_use = self.g1_charset if self.charset else self.g0_charset
        self.translation = LINE_DRAWING if in_use == DEC_SPECIAL_GRAPHICS else None
