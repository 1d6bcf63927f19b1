"""Full-size splits (tmux's split-window -f, join-pane -f): the new pane spans the whole window's
height (or width), the rest of the layout shrinks in proportion to make room. Ported from
tmux's layout_split_pane (its SPAWN_FULLSIZE path) so the geometry is tmux's cell for cell.
"""

from __future__ import annotations

from collections.abc import Hashable

from muxd.daemon.layouts.layout import PANE_MINIMUM, Cell, Layout, Orientation, leaf, node, room, split_sizes
from muxd.errors import BadRequest


def plan_full_split(layout: Layout, horizontal: bool, size: int | None, before: bool) -> tuple[int, int]:
    """What is left along the split for the old layout, and the new pane's size along it
    (BadRequest "no space for new pane" when the layout cannot shrink that far)."""
    orientation: Orientation = "lr" if horizontal else "tb"
    saved = layout.root.size_along(orientation)
    if saved < 2 * PANE_MINIMUM + 1:
        raise BadRequest("no space for new pane")
    first, second = split_sizes(saved, size, before)
    kept = second if before else first
    if not _fits(layout.root, orientation, kept):
        raise BadRequest("no space for new pane")
    return kept, saved - 1 - kept


def split_full(layout: Layout, new_pane: Hashable, horizontal: bool, size: int | None = None,
               before: bool = False) -> None:
    orientation: Orientation = "lr" if horizontal else "tb"
    kept, new_size = plan_full_split(layout, horizontal, size, before)
    root = layout.root
    columns, lines = root.columns, root.lines
    new = leaf(new_pane, new_size, lines) if horizontal else leaf(new_pane, columns, new_size)
    if root.children and root.orientation == orientation:
        root.set_along(orientation, kept)
        _fit_children(root)
        root.set_along(orientation, kept + 1 + new_size)
        root.add(new, 0 if before else None)
    else:
        parent = node(orientation, columns, lines)
        root.set_along(orientation, kept)
        parent.add(root)
        parent.add(new, 0 if before else None)
        _fit_children(root)
        layout.root = parent
    layout.remember()


def _new_size(previous: int, cell: Cell, orientation: Orientation, size: int, count_left: int,
              size_left: int) -> int:
    """`cell`'s share when its parent goes from `previous` to `size` cells (tmux's
    layout_new_pane_size): in proportion, leaving the cells after it their minimum."""
    if count_left == 1:
        return size_left
    current = cell.size_along(orientation)
    least = max((PANE_MINIMUM + 1) * (count_left - 1), current - room(cell, orientation))
    new = current * size // previous
    if size_left >= least:  # (unsigned in tmux: otherwise no upper bound applies)
        new = min(new, size_left - least)
    return max(new, PANE_MINIMUM)


def _fit_children(cell: Cell) -> None:
    """Refit `cell`'s children to its size (tmux's layout_resize_child_cells)."""
    orientation = cell.orientation
    if not cell.children or orientation is None:
        return
    count = len(cell.children)
    previous = sum(child.size_along(orientation) for child in cell.children) + count - 1
    available = cell.size_along(orientation)
    for index, child in enumerate(cell.children):
        if orientation == "tb":
            child.columns = cell.columns
            child.lines = _new_size(previous, child, "tb", cell.lines, count - index, available)
            available -= child.lines + 1
        else:
            child.columns = _new_size(previous, child, "lr", cell.columns, count - index, available)
            available -= child.columns + 1
            child.lines = cell.lines
        _fit_children(child)


def _fits(cell: Cell, orientation: Orientation, size: int) -> bool:
    """Whether `cell` can be made `size` along `orientation` (tmux's layout_set_size_check)."""
    if not cell.children:
        return size >= PANE_MINIMUM
    count = len(cell.children)
    if cell.orientation != orientation:
        return all(_fits(child, orientation, size) for child in cell.children if child.children)
    if size < count * 2 - 1:
        return False
    previous, available = cell.size_along(orientation), size
    for index, child in enumerate(cell.children):
        share = _new_size(previous, child, orientation, size, count - index, available)
        used = share if index == count - 1 else share + 1
        if used > available or not _fits(child, orientation, share):
            return False
        available -= used
    return True
