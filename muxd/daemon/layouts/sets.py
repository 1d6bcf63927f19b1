"""The predefined layouts of select-layout, built as tmux's layout-set.c builds them, so a window
of the same size with the same panes gets the same geometry: even-horizontal, even-vertical,
main-horizontal, main-vertical, tiled; names may be abbreviated while unambiguous ("tiled",
"even-h"). Each builder returns a new tree for the panes in the window's order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from muxd.config import MAIN_PANE_HEIGHT_LINES, MAIN_PANE_WIDTH_COLUMNS
from muxd.daemon.layouts.layout import PANE_MINIMUM, Cell, Orientation, adjust, leaf, node, spread
from muxd.errors import BadRequest

Builder = Callable[[Sequence[Hashable], int, int], Cell]


def _even(orientation: Orientation) -> Builder:
    def build(panes: Sequence[Hashable], columns: int, lines: int) -> Cell:
        root = node(orientation, columns, lines)
        for pane in panes:
            root.add(leaf(pane, columns, lines))
        spread(root)
        return root

    return build


def _main(orientation: Orientation) -> Builder:
    """main-horizontal (main pane on top, the others side by side below it; orientation "tb")
    or main-vertical (main pane on the left, the others stacked right of it; "lr")."""
    inner: Orientation = "lr" if orientation == "tb" else "tb"

    def cell(along: int, across: int, pane: Hashable | None = None, split: Orientation | None = None) -> Cell:
        """A cell `along` cells in the main direction and `across` the other way."""
        columns, lines = (across, along) if orientation == "tb" else (along, across)
        return leaf(pane, columns, lines) if pane is not None else node(split or orientation, columns, lines)

    def build(panes: Sequence[Hashable], columns: int, lines: int) -> Cell:
        across, along = (columns, lines) if orientation == "tb" else (lines, columns)
        available = along - 1  # one cell for the border
        main = MAIN_PANE_HEIGHT_LINES if orientation == "tb" else MAIN_PANE_WIDTH_COLUMNS
        if main + PANE_MINIMUM >= available:
            main = PANE_MINIMUM if available <= 2 * PANE_MINIMUM else available - PANE_MINIMUM
            other = PANE_MINIMUM
        else:
            other = available - main  # other-pane-height/-width 0: the others take the rest
        root = cell(main + other + 1, across)
        root.add(cell(main, across, panes[0]))
        if len(panes) == 2:
            root.add(cell(other, across, panes[1]))
            return root
        others = root.add(cell(other, across, split=inner))
        for pane in panes[1:]:
            others.add(cell(other, PANE_MINIMUM, pane))
        spread(others)
        return root

    return build


def _tiled(panes: Sequence[Hashable], columns: int, lines: int) -> Cell:
    count = len(panes)
    rows = across = 1
    while rows * across < count:
        rows += 1
        if rows * across < count:
            across += 1
    width = max((columns - (across - 1)) // across, PANE_MINIMUM)
    height = max((lines - (rows - 1)) // rows, PANE_MINIMUM)
    root = node("tb", max((width + 1) * across - 1, columns), max((height + 1) * rows - 1, lines))
    queue = list(panes)
    for row_index in range(rows):
        if not queue:
            break
        if count - row_index * across == 1 or across == 1:
            root.add(leaf(queue.pop(0), columns, height))
            continue
        row = root.add(node("lr", columns, height))
        while queue and len(row.children) < across:
            row.add(leaf(queue.pop(0), width, height))
        used = len(row.children) * (width + 1) - 1
        if columns > used:  # the last in the row takes what the even widths left over
            adjust(row.children[-1], "lr", columns - used)
    used = rows * height + rows - 1
    if lines > used:
        adjust(root.children[-1], "tb", lines - used)
    return root


LAYOUTS: tuple[tuple[str, Builder], ...] = (
    ("even-horizontal", _even("lr")),
    ("even-vertical", _even("tb")),
    ("main-horizontal", _main("tb")),
    ("main-vertical", _main("lr")),
    ("tiled", _tiled),
)
LAYOUT_NAMES = tuple(name for name, _ in LAYOUTS)


def lookup(name: str) -> int:
    """The index of a layout named `name` or an unambiguous start of one (BadRequest otherwise)."""
    matches = [index for index, known in enumerate(LAYOUT_NAMES) if known.startswith(name)] if name else []
    if len(matches) != 1:
        raise BadRequest(f"invalid layout: {name} (one of {', '.join(LAYOUT_NAMES)})", layout=name)
    return matches[0]


def build(index: int, panes: Sequence[Hashable], columns: int, lines: int) -> Cell:
    """Layout number `index` for `panes` in a `columns` x `lines` window (BadRequest: too small)."""
    name, builder = LAYOUTS[index]
    root = builder(panes, columns, lines)
    if (root.columns, root.lines) != (columns, lines) or not consistent(root):
        # tmux would make the window bigger than the terminal; muxd says so instead
        raise BadRequest(f"{name} does not fit {len(panes)} panes in {columns}x{lines}", layout=name)
    return root


def consistent(cell: Cell) -> bool:
    """Every split's children fill it exactly (with their borders), none below the minimum."""
    if not cell.children:
        return min(cell.columns, cell.lines) >= PANE_MINIMUM
    orientation = cell.orientation
    assert orientation is not None
    across: Orientation = "tb" if orientation == "lr" else "lr"
    filled = sum(child.size_along(orientation) for child in cell.children) + len(cell.children) - 1
    return (filled == cell.size_along(orientation)
            and all(child.size_along(across) == cell.size_along(across) and consistent(child)
                    for child in cell.children))
