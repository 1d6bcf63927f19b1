"""How many cells a character takes: the one table drawing, layout and attach all measure with.

Below drawing.py and line_layout.py, which both lay text out by it (and must agree).
"""

from __future__ import annotations

from wcwidth import wcwidth

# Character -> cells: the one width function behind CHAR_WIDTHS (line_layout.py scans it).
char_width = wcwidth


class _Widths(dict[str, int]):
    """Character -> cells (`char_width`), memoised for the life of the process."""

    def __missing__(self, char: str) -> int:
        width = char_width(char)
        self[char] = width
        return width


CHAR_WIDTHS = _Widths()
