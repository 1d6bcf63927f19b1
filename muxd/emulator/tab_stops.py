"""Default tab stops, which both emulators and the text layout (line_layout.py) count on."""

from __future__ import annotations

import functools

TAB_WIDTH = 8  # default tab stops: every TAB_WIDTH columns


@functools.cache
def default_tab_stops(columns: int) -> frozenset[int]:
    """The tab stops of a fresh screen `columns` wide (also what tmux resets them to on resize)."""
    return frozenset(range(TAB_WIDTH, columns, TAB_WIDTH))
