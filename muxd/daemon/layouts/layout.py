"""A window's layout: a tree of left/right and top/bottom splits whose leaves are panes.

Pure geometry, as tmux's layout.c: every cell knows its rectangle; splits keep a one-cell
border between children. Splits, closes, resize-pane and spreading follow tmux's algorithms
cell for cell, so the same commands give the same geometry (tests compare with tmux).

One difference, on purpose: when the window changes size (an outer terminal shrinks and grows)
tmux adds and takes cells one at a time, so dividers drift. Here every change the user makes
is remembered as the layout's *ideal*, and a window resize recomputes the sizes from that ideal
in proportion: the result depends only on the ideal and the new size, so shrinking and growing
back is the identity. The predefined layouts (select-layout) live in daemon/layouts/sets.py.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Literal

import msgspec

from muxd.errors import BadRequest

# A split leaves each side at least this big (tmux's own minimum is 1; 2 keeps shells usable).
MIN_SPLIT_CELLS = 2
# The least a pane shrinks to when a neighbour or the window takes space (tmux's PANE_MINIMUM).
PANE_MINIMUM = 1

Direction = Literal["left", "right", "up", "down"]
Orientation = Literal["lr", "tb"]


class Placement(msgspec.Struct, frozen=True):
    pane: Hashable
    x: int
    y: int
    columns: int
    lines: int


class Cell(msgspec.Struct, eq=False):
    """A leaf (`pane` set) or a split of `children` side by side ("lr") or stacked ("tb")."""

    columns: int
    lines: int
    pane: Hashable | None = None
    orientation: Orientation | None = None
    children: list[Cell] = msgspec.field(default_factory=list)
    parent: Cell | None = None
    x: int = 0
    y: int = 0
    ideal: tuple[int, int] = (0, 0)  # (columns, lines) when the layout was last changed by hand

    def __repr__(self) -> str:  # not its parent: that lists it again among its children
        what = f"pane={self.pane!r}" if self.pane is not None else f"{self.orientation} {self.children!r}"
        return f"Cell({self.columns}x{self.lines} at {self.x},{self.y} {what})"

    def size_along(self, orientation: Orientation) -> int:
        return self.columns if orientation == "lr" else self.lines

    def set_along(self, orientation: Orientation, size: int) -> None:
        if orientation == "lr":
            self.columns = size
        else:
            self.lines = size

    def leaves(self) -> Iterator[Cell]:
        if self.pane is not None:
            yield self
        for child in self.children:
            yield from child.leaves()

    def cells(self) -> Iterator[Cell]:
        yield self
        for child in self.children:
            yield from child.cells()

    def add(self, child: Cell, at: int | None = None) -> Cell:
        child.parent = self
        self.children.insert(len(self.children) if at is None else at, child)
        return child


def layout_checksum(body: str) -> int:
    """The 16-bit checksum that heads a tmux layout string (a rotate-and-add over its bytes)."""
    checksum = 0
    for char in body.encode():
        checksum = ((checksum >> 1) + ((checksum & 1) << 15) + char) & 0xFFFF
    return checksum


def size_in_cells(text: str, whole: int, flag: str = "-l") -> int:
    """tmux's size argument: "30" cells or "30%" of `whole` (BadRequest: neither)."""
    number = text.removesuffix("%")
    if not number.isdigit() or (text.endswith("%") and int(number) > 100):
        raise BadRequest(f"{flag} wants a number of cells or a percentage (30, 30%), got {text!r}",
                         size=text)
    return whole * int(number) // 100 if text.endswith("%") else int(number)


def split_sizes(saved: int, size: int | None, before: bool) -> tuple[int, int]:
    """A cell of `saved` cells split in two with a border: (left or top, right or bottom), the
    new side `size` (tmux's -l) or half, as tmux's layout_split_pane computes them."""
    if size is None:
        second = (saved + 1) // 2 - 1
    else:
        second = saved - size - 1 if before else size
        if second < 0:  # tmux computes this unsigned: it wraps and is cut to the largest
            second = saved - 2
    second = min(max(second, PANE_MINIMUM), saved - 2)
    return saved - 1 - second, second


def leaf(pane: Hashable, columns: int, lines: int) -> Cell:
    return Cell(columns=columns, lines=lines, pane=pane)


def node(orientation: Orientation, columns: int, lines: int) -> Cell:
    return Cell(columns=columns, lines=lines, orientation=orientation)


# ---------------------------------------------------------------- tmux's cell arithmetic

def room(cell: Cell, orientation: Orientation) -> int:
    """How much `cell` can give up along `orientation` (tmux's layout_resize_check)."""
    if not cell.children:
        return max(cell.size_along(orientation) - PANE_MINIMUM, 0)
    rooms = [room(child, orientation) for child in cell.children]
    return sum(rooms) if cell.orientation == orientation else min(rooms)


def adjust(cell: Cell, orientation: Orientation, change: int) -> None:
    """Grow (or shrink) `cell` by `change` along `orientation`, its children evenly, one cell
    at a time from the first (tmux's layout_resize_adjust); the caller bounds a shrink."""
    cell.set_along(orientation, cell.size_along(orientation) + change)
    if not cell.children:
        return
    if cell.orientation != orientation:
        for child in cell.children:
            adjust(child, orientation, change)
        return
    while change:
        before = change
        for child in cell.children:
            if change == 0:
                break
            if change > 0:
                adjust(child, orientation, 1)
                change -= 1
            elif room(child, orientation) > 0:
                adjust(child, orientation, -1)
                change += 1
        if change == before:  # nothing left to take: the caller asked for too much
            break


def spread(parent: Cell) -> bool:
    """Make the children of `parent` equal (the last takes the rest); True if anything moved."""
    count = len(parent.children)
    orientation = parent.orientation
    if count <= 1 or orientation is None:
        return False
    size = parent.size_along(orientation)
    each = (size - (count - 1)) // count
    if size < count - 1 or each == 0:
        return False
    changed = False
    for index, child in enumerate(parent.children):
        if index == count - 1:
            each = size - (each + 1) * (count - 1)
        change = each - child.size_along(orientation)
        adjust(child, orientation, change)
        changed = changed or change != 0
    return changed


def _minimum(cell: Cell, orientation: Orientation) -> int:
    """The least `cell` can be along `orientation` with every pane at PANE_MINIMUM."""
    if not cell.children:
        return PANE_MINIMUM
    sizes = [_minimum(child, orientation) for child in cell.children]
    if cell.orientation == orientation:
        return sum(sizes) + len(sizes) - 1
    return max(sizes)


def proportional(total: int, weights: list[int], minimums: list[int]) -> list[int]:
    """`total` cells split in proportion to `weights`, none below its minimum, rounded by the
    largest remainder. When total equals the weights' sum the answer is the weights, exactly;
    when the minimums do not fit, the minimums (the layout is then cut off at the edge)."""
    if total <= sum(minimums):
        return list(minimums)
    weight_sum = sum(weights) or 1
    sizes = [max(total * w // weight_sum, low) for w, low in zip(weights, minimums)]

    def remainder(i: int) -> int:  # how far below its exact share child i is, times weight_sum
        return total * weights[i] - sizes[i] * weight_sum

    indexes = range(len(sizes))
    while sum(sizes) < total:
        sizes[max(indexes, key=lambda i: (remainder(i), -i))] += 1
    while sum(sizes) > total:
        shrinkable = [i for i in indexes if sizes[i] > minimums[i]]
        sizes[min(shrinkable, key=lambda i: (remainder(i), -i))] -= 1
    return sizes


class Layout:
    """The split tree of one window of size `columns` x `lines`."""

    def __init__(self, pane: Hashable, columns: int, lines: int) -> None:
        self.root = leaf(pane, columns, lines)
        self.remember()

    # ------------------------------------------------------------ queries

    @property
    def columns(self) -> int:
        return self.root.columns

    @property
    def lines(self) -> int:
        return self.root.lines

    def minimum_size(self) -> tuple[int, int]:
        """The least (columns, lines) that hold every pane at PANE_MINIMUM; a smaller window
        shows the layout cut off at its edge."""
        return _minimum(self.root, "lr"), _minimum(self.root, "tb")

    def panes(self) -> list[Hashable]:
        return [cell.pane for cell in self.root.leaves()]

    def placements(self) -> list[Placement]:
        """Every pane with its rectangle (0-based, within the window), in tree order."""
        self._place(self.root, 0, 0)
        return [Placement(cell.pane, cell.x, cell.y, cell.columns, cell.lines)
                for cell in self.root.leaves()]

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

    def dump(self, pane_number: dict[int, int]) -> str:
        """tmux's layout string (#{window_layout}): checksum, then `WxH,X,Y[,ID]` per cell with
        left/right children in {} and top/bottom ones in []. `pane_number` maps id(pane) to N of %N."""
        self._place(self.root, 0, 0)

        def text(cell: Cell) -> str:
            head = f"{cell.columns}x{cell.lines},{cell.x},{cell.y}"
            if cell.pane is not None:
                return f"{head},{pane_number[id(cell.pane)]}"
            opening, closing = ("{", "}") if cell.orientation == "lr" else ("[", "]")
            return head + opening + ",".join(text(child) for child in cell.children) + closing

        body = text(self.root)
        return f"{layout_checksum(body):04x},{body}"

    # ------------------------------------------------------------ changes

    def plan_split(self, pane: Hashable, horizontal: bool, size: int | None = None,
                   before: bool = False) -> tuple[tuple[int, int], tuple[int, int]]:
        """((columns, lines) left for `pane`, (columns, lines) of the new pane) or BadRequest.
        `size` is the new pane's along the split (tmux's -l), else half; `before`: the new pane
        goes left of (above) `pane`."""
        cell = self._leaf(pane)
        saved = cell.columns if horizontal else cell.lines
        if saved < 2 * MIN_SPLIT_CELLS + 1:
            raise BadRequest(f"pane {getattr(pane, 'id', pane)} is too small to split",
                             pane=str(getattr(pane, "id", pane)))
        first, second = split_sizes(saved, size, before)
        old, new = (second, first) if before else (first, second)
        if horizontal:
            return (old, cell.lines), (new, cell.lines)
        return (cell.columns, old), (cell.columns, new)

    def split(self, pane: Hashable, new_pane: Hashable, horizontal: bool, size: int | None = None,
              before: bool = False) -> None:
        """Put `new_pane` right of (below; with `before`, left of or above) `pane`, as tmux's
        layout_split_pane: into the parent split if it runs the same way, else a new split."""
        (old_c, old_l), (new_c, new_l) = self.plan_split(pane, horizontal, size, before)
        cell = self._leaf(pane)
        orientation: Orientation = "lr" if horizontal else "tb"
        parent = cell.parent
        if parent is None or parent.orientation != orientation:
            inner = leaf(cell.pane, cell.columns, cell.lines)
            cell.pane, cell.orientation = None, orientation
            cell.add(inner)
            parent, cell = cell, inner
        at = parent.children.index(cell) + (0 if before else 1)
        cell.columns, cell.lines = old_c, old_l
        parent.add(leaf(new_pane, new_c, new_l), at)
        self.remember()

    def remove(self, pane: Hashable) -> None:
        """Take `pane` out; the cell before it (the one after, for a first cell) takes its space
        and border, as tmux's layout_destroy_cell."""
        cell = self._leaf(pane)
        parent = cell.parent
        if parent is None:
            raise BadRequest("the last pane of a layout cannot be removed from it")
        orientation = parent.orientation
        assert orientation is not None
        index = parent.children.index(cell)
        heir = parent.children[index + 1] if index == 0 else parent.children[index - 1]
        adjust(heir, orientation, cell.size_along(orientation) + 1)
        parent.children.remove(cell)
        if len(parent.children) == 1:  # a split of one is no split: the child takes its place
            self._replace(parent, parent.children[0])
        self.remember()

    def replace(self, pane: Hashable, other: Hashable) -> None:
        """`other` takes `pane`'s cell (swap-pane between windows)."""
        self._leaf(pane).pane = other

    def swap(self, first: Hashable, second: Hashable) -> None:
        """The two panes trade cells (swap-pane in one window)."""
        a, b = self._leaf(first), self._leaf(second)
        a.pane, b.pane = b.pane, a.pane

    def set_root(self, root: Cell) -> None:
        """A whole new tree (select-layout), of this window's size."""
        self.root = root
        root.parent = None
        self.remember()

    def resize(self, columns: int, lines: int) -> None:
        """Fit the whole tree to a new window size, in proportion to the ideal (see the module
        docstring): going back to the ideal's size gives the ideal back, exactly."""
        self._fit(self.root, max(1, columns), max(1, lines))

    def resize_pane(self, pane: Hashable, orientation: Orientation, change: int) -> int:
        """Move the divider after `pane` (before it, for a last cell) by `change` cells along
        `orientation`, neighbours giving or taking the space, as tmux's resize-pane -L/-R/-U/-D.
        Returns how far it moved; BadRequest when no divider runs that way."""
        cell = self._mover(pane, orientation)
        parent = cell.parent
        assert parent is not None
        if cell is parent.children[-1]:
            cell = parent.children[-2]
        moved, needed = 0, change
        while needed:
            step = self._grow(cell, orientation, needed) if change > 0 else self._shrink(cell, orientation, needed)
            if step == 0:
                break
            moved += step
            needed -= step if change > 0 else -step
        self.remember()
        return moved

    def resize_pane_to(self, pane: Hashable, orientation: Orientation, size: int) -> int:
        """resize-pane -x/-y: make `pane`'s cell `size` cells along `orientation`, as far as
        its neighbours allow."""
        if self._leaf(pane).size_along(orientation) == size:
            return 0  # nothing to move (and no need for a divider that way)
        cell = self._mover(pane, orientation)
        parent = cell.parent
        assert parent is not None
        current = cell.size_along(orientation)
        change = current - size if cell is parent.children[-1] else size - current
        return self.resize_pane(pane, orientation, change) if change else 0

    def spread_out(self, pane: Hashable) -> None:
        """select-layout -E: the nearest split around `pane` that is not even becomes even."""
        parent = self._leaf(pane).parent
        while parent is not None:
            if spread(parent):
                break
            parent = parent.parent
        self.remember()

    def remember(self) -> None:
        """The current sizes become the ideal that window resizes scale from."""
        for cell in self.root.cells():
            cell.ideal = (cell.columns, cell.lines)

    # ------------------------------------------------------------ internals

    def _leaf(self, pane: Hashable) -> Cell:
        for cell in self.root.leaves():
            if cell.pane is pane:
                return cell
        raise BadRequest(f"pane {getattr(pane, 'id', pane)} is not in this layout")

    def _mover(self, pane: Hashable, orientation: Orientation) -> Cell:
        """The cell on `pane`'s path whose parent splits along `orientation` (BadRequest: none)."""
        cell = self._leaf(pane)
        while cell.parent is not None and cell.parent.orientation != orientation:
            cell = cell.parent
        if cell.parent is None:
            side = "left or right" if orientation == "lr" else "above or below"
            raise BadRequest(f"pane {getattr(pane, 'id', pane)} has no pane {side} to take the space from",
                             pane=str(getattr(pane, "id", pane)))
        return cell

    @staticmethod
    def _grow(cell: Cell, orientation: Orientation, needed: int) -> int:
        """Grow `cell` from the first sibling after it with room (else before it)."""
        siblings = cell.parent.children if cell.parent else [cell]
        at = siblings.index(cell)
        donors = siblings[at + 1:] + siblings[:at][::-1]
        donor = next((d for d in donors if room(d, orientation) > 0), None)
        if donor is None:
            return 0
        size = min(room(donor, orientation), needed)
        adjust(cell, orientation, size)
        adjust(donor, orientation, -size)
        return size

    @staticmethod
    def _shrink(cell: Cell, orientation: Orientation, needed: int) -> int:
        """Give the sibling after `cell` space taken from `cell` (or the nearest before it with room)."""
        siblings = cell.parent.children if cell.parent else [cell]
        at = siblings.index(cell)
        if at + 1 >= len(siblings):
            return 0
        donor = next((d for d in siblings[at::-1] if room(d, orientation) > 0), None)
        if donor is None:
            return 0
        size = min(room(donor, orientation), -needed)
        adjust(siblings[at + 1], orientation, size)
        adjust(donor, orientation, -size)
        return size

    def _replace(self, old: Cell, new: Cell) -> None:
        parent = old.parent
        new.parent = parent
        new.columns, new.lines = old.columns, old.lines
        if parent is None:
            self.root = new
        else:
            parent.children[parent.children.index(old)] = new

    def _fit(self, cell: Cell, columns: int, lines: int) -> None:
        cell.columns, cell.lines = columns, lines
        orientation = cell.orientation
        if not cell.children or orientation is None:
            return
        # Each child counts with the border after it (the last with a virtual one): a pane and
        # its border grow together, so two halves stay halves.
        total = cell.size_along(orientation) + 1
        weights = [child.ideal[0 if orientation == "lr" else 1] + 1 for child in cell.children]
        shares = proportional(total, weights, [_minimum(child, orientation) + 1 for child in cell.children])
        for child, share in zip(cell.children, shares):
            size = share - 1
            if orientation == "lr":
                self._fit(child, size, lines)
            else:
                self._fit(child, columns, size)

    def _place(self, cell: Cell, x: int, y: int) -> None:
        cell.x, cell.y = x, y
        for child in cell.children:
            self._place(child, x, y)
            if cell.orientation == "lr":
                x += child.columns + 1
            else:
                y += child.lines + 1
