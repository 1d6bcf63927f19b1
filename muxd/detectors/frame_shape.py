"""The shape of a frame: its text with the parts that tick masked out.

An agent that thinks for minutes redraws its spinner ten times a second: a new glyph, one more
second, a few more tokens. None of that can change what the agent is doing, so the runner reads
such a frame only now and then (to keep the counters fresh) and otherwise skips it. The shape
masks digits and spinner glyphs; anything else that changes, even one letter, is a new shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from muxd.detectors._lazy_re import lazy_compile
from muxd.detectors._text import LineMemo

# Digits (elapsed seconds, token counts) and the glyphs spinners cycle through: braille dots
# (Gemini, Codex), Claude Code's stars, Aider's scanning blocks.
_TICKING = lazy_compile("[0-9]+|[\u2800-\u28ff\u2722\u2733\u2736\u273b\u273d\u00b7*\u2591\u2592\u2593\u2588]")


def mask(line: str) -> str:
    return _TICKING.sub("0", line)


_MASKS = LineMemo(mask)  # a redrawn row is often a row seen before (a scroll, a blinking cell)


class FrameShape:
    """Remembers the last frame's rows and their masks; masks again only rows that changed."""

    def __init__(self) -> None:
        self._rows: list[str] = []
        self._masks: list[str] = []

    def changed(self, lines: Sequence[str]) -> bool:
        """Whether `lines` differ from the previous frame in more than ticking parts."""
        rows, masks = self._rows, self._masks
        if len(lines) != len(rows):
            self._rows, self._masks = list(lines), [_MASKS[line] for line in lines]
            return True
        changed = False
        for index, line in enumerate(lines):
            old = rows[index]
            if line is old or line == old:
                continue
            rows[index] = line
            masked = _MASKS[line]
            if masked != masks[index]:
                masks[index] = masked
                changed = True
        return changed
