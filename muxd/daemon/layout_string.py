"""A window's layout as tmux writes it (`#{window_layout}`, list-windows): "b25d,80x24,0,0,0".

Each cell is `WxH,X,Y` followed by its pane's number, or by its children in `{…}` (side by
side) or `[…]` (stacked); the whole is prefixed by tmux's 16-bit checksum of that text
(layout-custom.c), which tmux checks when a layout string is given back to it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from muxd.daemon.layout import Cell, Layout


def layout_checksum(text: str) -> int:
    checksum = 0
    for char in text.encode():
        checksum = ((checksum >> 1) + ((checksum & 1) << 15) + char) & 0xFFFF
    return checksum


def layout_string(layout: Layout, number_of: Callable[[Hashable], int]) -> str:
    """`layout` in tmux's words; `number_of(pane)` is the N of the pane's `%N`."""
    layout.placements()  # places every cell (x, y)
    body = _cell_text(layout.root, number_of)
    return f"{layout_checksum(body):04x},{body}"


def _cell_text(cell: Cell, number_of: Callable[[Hashable], int]) -> str:
    head = f"{cell.columns}x{cell.lines},{cell.x},{cell.y}"
    if cell.pane is not None:
        return f"{head},{number_of(cell.pane)}"
    inner = ",".join(_cell_text(child, number_of) for child in cell.children)
    return f"{head}{{{inner}}}" if cell.orientation == "lr" else f"{head}[{inner}]"
