"""How many cells a character takes: the one table drawing, layout and attach all measure with.

Below drawing.py and line_layout.py, which both lay text out by it (and must agree). wcwidth
answers; it is imported at the first character outside printable ASCII (~15 ms and 1-2 MiB a
daemon need not pay before its first reply), printable ASCII being one cell each.
"""

from __future__ import annotations

import functools
from typing import Callable

_PRINTABLE_ASCII = range(0x20, 0x7F)


@functools.cache
def _wcwidth() -> Callable[[str], int]:
    from wcwidth import wcwidth

    return wcwidth


def char_width(char: str) -> int:
    """Cells `char` takes, as wcwidth says: the one width function behind CHAR_WIDTHS
    (line_layout.py scans it)."""
    return _wcwidth()(char)


class _Widths(dict[str, int]):
    """Character -> cells (`char_width`), memoised for the life of the process."""

    def __missing__(self, char: str) -> int:
        width = char_width(char)
        self[char] = width
        return width


CHAR_WIDTHS = _Widths({chr(code): 1 for code in _PRINTABLE_ASCII})
