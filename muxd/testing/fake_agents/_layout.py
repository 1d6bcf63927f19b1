"""Pure text layout for the fake agents' screens: wrapped paragraphs, boxes, columns, and
frames with the input area pinned to the bottom."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """`text` wrapped to `width` columns, the first row after `first`, the others after `rest`."""
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest) or [first.rstrip()]


def flush_right(left: str, right: str, width: int) -> str:
    """`left`, then `right` ending at the last column (one space between them at least)."""
    return left + " " * max(1, width - len(left) - len(right)) + right


def columns(cells: Sequence[str], starts: Sequence[int], width: int) -> str:
    """`cells` placed at column `starts[i]`, the last one flush right."""
    row = ""
    for cell, start in zip(cells[:-1], starts, strict=False):
        row = row.ljust(start) + cell
    return flush_right(row, cells[-1], width)


def box(rows: Sequence[str], width: int) -> list[str]:
    """`rows` inside a rounded box `width` columns wide."""
    inner = width - 4
    return (["╭" + "─" * (width - 2) + "╮"]
            + [f"│ {row[:inner].ljust(inner)} │" for row in rows]
            + ["╰" + "─" * (width - 2) + "╯"])


def pin_bottom(top: Sequence[str], bottom: Sequence[str], height: int) -> list[str]:
    """A whole frame: the tail of `top` that fits, blank rows, then `bottom` on the last rows."""
    room = max(0, height - len(bottom))
    shown = list(top[-room:]) if room else []
    return shown + [""] * (room - len(shown)) + list(bottom)


def tail(rows: Sequence[str], height: int) -> list[str]:
    """The last `height` rows: what a screen that scrolls shows of a longer frame."""
    return list(rows[-height:]) if height > 0 else []


def words_so_far(text: str, fraction: float) -> str:
    """The first `fraction` of `text`'s words (one at least): an answer as it streams in."""
    words = text.split()
    return " ".join(words[:max(1, round(len(words) * min(fraction, 1.0)))])
