"""A window's layout: a tree of left/right and top/bottom splits whose leaves are panes.

Pure geometry, as tmux's layout.c: every cell knows its rectangle; splits keep a one-cell
border between children. Nothing here touches a pane beyond holding it as a leaf's key; the
window applies the resulting sizes (see `Window.apply_layout` in daemon/registry.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from muxd.errors import BadRequest

# A split leaves each side at least this big (tmux's own minimum is 1; 2 keeps shells usable).
MIN_SPLIT_CELLS = 2

Direction = Literal["left", "right", "up", "down"]
Orientation = Literal["lr", "tb"]


@dataclass(frozen=True)
class Placement:
    pane: Hashable
    x: int
    y: int
    columns: int
    lines: int


@dataclass(eq=False)
class Cell:
    """A leaf (`pane` set) or a split of `children` side by side ("lr") or stacked ("tb")."""

    columns: int
    lines: int
    pane: Hashable | None = None
    orientation: Orientation | None = None
    children: list[Cell] = field(default_factory=list)
    parent: Cell | None = None
    x: int = 0
    y: int = 0

    def size_along(self, orientation: Orientation) -> int:
        return self.columns if orientation == "lr" else self.lines

    def leaves(self) -> Iterator[Cell]:
        if self.pane is not None:
            yield self
        for child in self.children:
            yield from child.leaves()


def _distribute(total: int, weights: list[int]) -> list[int]:
    """Split `total` cells in proportion to `weights`, each at least 1 (the sum may then exceed)."""
    weight_sum = sum(weights) or len(weights)
    sizes = [max(1, total * w // weight_sum) for w in weights]
    # Hand out what rounding left over (or take back the excess) from the last child backwards.
    index = len(sizes) - 1
    while sum(sizes) < total:
        sizes[index] += 1
        index = (index - 1) % len(sizes)
    guard = len(sizes) * max(1, total)
    while sum(sizes) > total and any(s > 1 for s in sizes) and guard:
        if sizes[index] > 1:
            sizes[index] -= 1
        index = (index - 1) % len(sizes)
        guard -= 1
    return sizes


class Layout:
    """The split tree of one window of size `columns` x `lines`."""

    def __init__(self, pane: Hashable, columns: int, lines: int) -> None:
        self.root = Cell(columns=columns, lines=lines, pane=pane)

    # ------------------------------------------------------------ queries

    @property
    def columns(self) -> int:
        return self.root.columns

    @property
    def lines(self) -> int:
        return self.root.lines

    def panes(self) -> list[Hashable]:
        return [leaf.pane for leaf in self.root.leaves()]

    def placements(self) -> list[Placement]:
        """Every pane with its rectangle (0-based, within the window), in tree order."""
        self._place(self.root, 0, 0)
        return [Placement(leaf.pane, leaf.x, leaf.y, leaf.columns, leaf.lines)
                for leaf in self.root.leaves()]

    def placement(self, pane: Hashable) -> Placement:
        for placed in self.placements():
            if placed.pane is pane:
                return placed
        raise BadRequest(f"pane {pane!r} is not in this layout")

    def neighbour(self, pane: Hashable, direction: Direction) -> Hashable | None:
        """The pane across the border from `pane` in `direction`, as tmux's select-pane -L/-R/-U/-D."""
        placements = self.placements()
        here = next(p for p in placements if p.pane is pane)
        best: tuple[int, int, Hashable] | None = None
        for other in placements:
            if other.pane is pane:
                continue
            if direction in ("left", "right"):
                touching = (other.x + other.columns + 1 == here.x if direction == "left"
                            else here.x + here.columns + 1 == other.x)
                overlap = min(here.y + here.lines, other.y + other.lines) - max(here.y, other.y)
                distance = abs(other.y - here.y)
            else:
                touching = (other.y + other.lines + 1 == here.y if direction == "up"
                            else here.y + here.lines + 1 == other.y)
                overlap = min(here.x + here.columns, other.x + other.columns) - max(here.x, other.x)
                distance = abs(other.x - here.x)
            if touching and overlap > 0 and (best is None or (distance, -overlap) < best[:2]):
                best = (distance, -overlap, other.pane)
        return best[2] if best is not None else None

    # ------------------------------------------------------------ changes

    def plan_split(self, pane: Hashable, horizontal: bool) -> tuple[tuple[int, int], tuple[int, int]]:
        """((columns, lines) left for `pane`, (columns, lines) of the new pane) or BadRequest."""
        leaf = self._leaf(pane)
        if horizontal:
            new = (leaf.columns - 1) // 2
            old_size, new_size = (leaf.columns - 1 - new, leaf.lines), (new, leaf.lines)
        else:
            new = (leaf.lines - 1) // 2
            old_size, new_size = (leaf.columns, leaf.lines - 1 - new), (leaf.columns, new)
        if min(*old_size, *new_size) < MIN_SPLIT_CELLS:
            raise BadRequest(f"pane {getattr(pane, 'id', pane)} is too small to split",
                             pane=str(getattr(pane, "id", pane)))
        return old_size, new_size

    def split(self, pane: Hashable, new_pane: Hashable, horizontal: bool) -> None:
        """Put `new_pane` right of (or below) `pane`, each taking about half its space."""
        (old_c, old_l), (new_c, new_l) = self.plan_split(pane, horizontal)
        leaf = self._leaf(pane)
        orientation: Orientation = "lr" if horizontal else "tb"
        parent = leaf.parent
        if parent is None or parent.orientation != orientation:
            # The leaf becomes a split holding itself and the new pane.
            inner = Cell(columns=old_c, lines=old_l, pane=leaf.pane, parent=leaf)
            leaf.pane, leaf.orientation, leaf.children = None, orientation, [inner]
            parent, position = leaf, 1
        else:
            leaf.columns, leaf.lines = old_c, old_l
            position = parent.children.index(leaf) + 1
        parent.children.insert(position, Cell(columns=new_c, lines=new_l, pane=new_pane, parent=parent))

    def remove(self, pane: Hashable) -> None:
        """Take `pane` out, giving its space (and its border) to a neighbour, as tmux does."""
        leaf = self._leaf(pane)
        parent = leaf.parent
        if parent is None:
            raise BadRequest("the last pane of a layout cannot be removed from it")
        index = parent.children.index(leaf)
        parent.children.remove(leaf)
        heir = parent.children[index - 1] if index > 0 else parent.children[0]
        orientation = parent.orientation
        assert orientation is not None
        grown = heir.size_along(orientation) + leaf.size_along(orientation) + 1
        self._resize_cell(heir, grown if orientation == "lr" else heir.columns,
                          grown if orientation == "tb" else heir.lines)
        if len(parent.children) == 1:  # a split of one is no split: the child takes its place
            only = parent.children[0]
            parent.pane, parent.orientation, parent.children = only.pane, only.orientation, only.children
            for child in parent.children:
                child.parent = parent
            # A nested split of the same orientation as the grandparent folds into it.
            grand = parent.parent
            if grand is not None and parent.orientation == grand.orientation and parent.children:
                at = grand.children.index(parent)
                grand.children[at:at + 1] = parent.children
                for child in parent.children:
                    child.parent = grand

    def resize(self, columns: int, lines: int) -> None:
        """Fit the whole tree to a new window size, keeping proportions."""
        self._resize_cell(self.root, max(1, columns), max(1, lines))

    # ------------------------------------------------------------ internals

    def _leaf(self, pane: Hashable) -> Cell:
        for leaf in self.root.leaves():
            if leaf.pane is pane:
                return leaf
        raise BadRequest(f"pane {getattr(pane, 'id', pane)} is not in this layout")

    def _resize_cell(self, cell: Cell, columns: int, lines: int) -> None:
        cell.columns, cell.lines = columns, lines
        if not cell.children:
            return
        orientation = cell.orientation
        assert orientation is not None
        total = (columns if orientation == "lr" else lines) - (len(cell.children) - 1)
        sizes = _distribute(max(total, len(cell.children)),
                            [child.size_along(orientation) for child in cell.children])
        for child, size in zip(cell.children, sizes):
            if orientation == "lr":
                self._resize_cell(child, size, lines)
            else:
                self._resize_cell(child, columns, size)

    def _place(self, cell: Cell, x: int, y: int) -> None:
        cell.x, cell.y = x, y
        for child in cell.children:
            self._place(child, x, y)
            if cell.orientation == "lr":
                x += child.columns + 1
            else:
                y += child.lines + 1
