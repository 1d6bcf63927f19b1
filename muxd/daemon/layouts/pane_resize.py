"""resize-pane in a window of several panes: -x/-y (cells or a percentage of the window) and
-L/-R/-U/-D (a divider moved), as tmux does. Shared by the command (commands/panes.py) and the
prefix's M-/C-arrows (client_side/prefix_actions.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.errors import BadRequest

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Window
    from muxd.protocol.messages import ResizePane


def resize_in_layout(window: Window, pane: Pane, req: ResizePane) -> None:
    """Move the dividers around `pane` as tmux's resize-pane does (BadRequest: no divider that way)."""
    layout = window.layout
    assert layout is not None
    if req.amount < 1:
        raise BadRequest(f"adjustment {req.amount} is too small", field="amount")
    window.zoomed = False
    columns = absolute_size(req.columns, req.columns_percent, None, layout.columns)
    lines = absolute_size(req.lines, req.lines_percent, None, layout.lines)
    if columns is not None:
        layout.resize_pane_to(pane, "lr", max(columns, 1))
    if lines is not None:
        layout.resize_pane_to(pane, "tb", max(lines, 1))
    if req.direction is not None:
        sign = -1 if req.direction in ("L", "U") else 1
        layout.resize_pane(pane, "lr" if req.direction in ("L", "R") else "tb", sign * req.amount)
    window.apply_layout()


def absolute_size(cells: int | None, percent: int | None, default: int | None, whole: int | None = None) -> int | None:
    """`cells`, else `percent` of `whole` (of `default` without one), else `default`
    (BadRequest: not a percentage)."""
    if percent is not None:
        if not 0 <= percent <= 100:
            raise BadRequest(f"{percent}% is not a percentage", field="percent")
        return (whole if whole is not None else default or 0) * percent // 100
    return default if cells is None else cells
