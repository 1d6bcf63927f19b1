"""The layout tree (muxd/daemon/layouts/layout.py, layout_sets.py) against real tmux, the oracle: the
same splits, closes, resize-pane moves, swaps and select-layouts give the same #{window_layout};
and window resizes that come back to a size give back the same layout, exactly."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from muxd.daemon.layouts import sets as layout_sets
from muxd.daemon.layouts.layout import Layout, size_in_cells
from muxd.daemon.layouts.full import plan_full_split, split_full
from muxd.daemon.layouts.text import parse_layout
from muxd.errors import BadRequest
from muxd.testing.tmux_oracle import TmuxOracle


class P:
    """A pane as the layout sees it; `number` is the N of tmux's %N for the same pane."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.id = f"%{number}"

    def __repr__(self) -> str:
        return self.id


@pytest.fixture(scope="module")
def tmux() -> Iterator[TmuxOracle]:
    oracle = TmuxOracle()
    yield oracle
    oracle.close()


class Twin:
    """One window twice: muxd's Layout and a tmux window, changed by the same commands."""

    def __init__(self, tmux: TmuxOracle, columns: int, lines: int) -> None:
        self.tmux = tmux
        first = P(tmux.new_window(columns, lines))
        self.panes = [first]  # in the window's pane order (tmux's, which select-layout follows)
        self.layout = Layout(first, columns, lines)

    def dump(self) -> str:
        return self.layout.dump({id(p): p.number for p in self.panes})

    def check(self, what: str) -> None:
        assert self.dump() == self.tmux.layout(self.panes[0].number), what

    def split(self, pane: P, horizontal: bool, size: int | None = None, before: bool = False,
              full: bool = False) -> P | None:
        try:
            if full:
                plan_full_split(self.layout, horizontal, size, before)
            else:
                self.layout.plan_split(pane, horizontal, size, before)
        except BadRequest:
            # muxd keeps 2 cells a side where tmux allows 1; tmux grows the window where it
            # cannot fit a full-size pane: neither is compared
            return None
        flags = ["-h" if horizontal else "-v", *(["-l", str(size)] if size is not None else []),
                 *(["-b"] if before else []), *(["-f"] if full else [])]
        new = P(self.tmux.split(pane.number, *flags))
        if full:
            split_full(self.layout, new, horizontal, size, before)
            self.panes.insert(0 if before else len(self.panes), new)
        else:
            self.layout.split(pane, new, horizontal, size, before)
            self.panes.insert(self.panes.index(pane) + (0 if before else 1), new)
        return new

    def kill(self, pane: P) -> None:
        self.tmux.run("kill-pane", "-t", pane.id)
        self.layout.remove(pane)
        self.panes.remove(pane)

    def resize(self, pane: P, flag: str, amount: int) -> None:
        self.tmux.run("resize-pane", "-t", pane.id, f"-{flag}", str(amount))
        try:
            self.layout.resize_pane(pane, "lr" if flag in "LR" else "tb", amount if flag in "RD" else -amount)
        except BadRequest:
            pass  # no divider that way: tmux does nothing, muxd says so

    def resize_to(self, pane: P, flag: str, size: int) -> None:
        self.tmux.run("resize-pane", "-t", pane.id, f"-{flag}", str(size))
        try:
            self.layout.resize_pane_to(pane, "lr" if flag == "x" else "tb", size)
        except BadRequest:
            pass

    def select(self, name: str) -> bool:
        try:
            root = layout_sets.build(layout_sets.lookup(name), self.panes, self.layout.columns, self.layout.lines)
        except BadRequest:
            return False  # does not fit: tmux would grow the window past the terminal
        self.tmux.run("select-layout", "-t", self.panes[0].id, name)
        self.layout.set_root(root)
        return True

    def spread(self, pane: P) -> None:
        self.tmux.run("select-layout", "-E", "-t", pane.id)
        self.layout.spread_out(pane)

    def swap(self, source: P, target: P) -> None:
        self.tmux.run("swap-pane", "-d", "-s", source.id, "-t", target.id)
        self.layout.swap(source, target)
        a, b = self.panes.index(source), self.panes.index(target)
        self.panes[a], self.panes[b] = target, source


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40), (61, 17)])
def test_every_predefined_layout_is_tmuxs(tmux: TmuxOracle, columns: int, lines: int) -> None:
    rng = random.Random(columns * lines)
    for count in range(2, 8):
        twin = Twin(tmux, columns, lines)
        while len(twin.panes) < count:
            twin.split(rng.choice(twin.panes), rng.random() < 0.5)
        twin.check(f"{count} panes split at random")
        for name in layout_sets.LAYOUT_NAMES:
            if twin.select(name):
                twin.check(f"{name} of {count} panes in {columns}x{lines}")
        twin.tmux.run("kill-session", "-t", f"{twin.panes[0].id}")


def test_abbreviated_and_unknown_layout_names() -> None:
    assert layout_sets.lookup("tiled") == 4 and layout_sets.lookup("even-v") == 1 and layout_sets.lookup("t") == 4
    for bad in ("even", "main", "spiral", ""):
        with pytest.raises(BadRequest, match="invalid layout"):
            layout_sets.lookup(bad)
    with pytest.raises(BadRequest, match="does not fit"):
        layout_sets.build(0, [P(n) for n in range(10)], 12, 5)


@pytest.mark.parametrize("seed", range(10))
def test_random_edits_give_tmuxs_geometry(tmux: TmuxOracle, seed: int) -> None:
    rng = random.Random(seed)
    twin = Twin(tmux, rng.choice([100, 137, 90]), rng.choice([30, 41, 25]))
    for step in range(30):
        pane = rng.choice(twin.panes)
        op = rng.choice(["split", "split", "split", "kill", "resize", "resize_to", "swap", "select", "spread"])
        if op == "split" or len(twin.panes) == 1:
            size = rng.choice([None, None, rng.randint(1, 30)])
            twin.split(pane, rng.random() < 0.5, size, rng.random() < 0.2, rng.random() < 0.2)
        elif op == "kill":
            twin.kill(pane)
        elif op == "resize":
            twin.resize(pane, rng.choice("LRUD"), rng.randint(1, 15))
        elif op == "resize_to":
            flag = rng.choice("xy")
            twin.resize_to(pane, flag, rng.randint(1, 40 if flag == "x" else 15))
        elif op == "swap":
            twin.swap(pane, rng.choice(twin.panes))
        elif op == "select":
            twin.select(rng.choice(layout_sets.LAYOUT_NAMES))
        else:
            twin.spread(pane)
        twin.check(f"seed {seed} step {step}: {op} on {pane}")
    twin.tmux.run("kill-session", "-t", twin.panes[0].id)


def random_layout(rng: random.Random, columns: int, lines: int, count: int) -> Layout:
    panes = [P(0)]
    layout = Layout(panes[0], columns, lines)
    while len(panes) < count:
        target, new = rng.choice(panes), P(len(panes))
        try:
            layout.split(target, new, rng.random() < 0.5, rng.choice([None, rng.randint(2, 20)]))
        except BadRequest:
            continue
        panes.append(new)
        if rng.random() < 0.3:
            try:
                layout.resize_pane(rng.choice(panes), rng.choice(["lr", "tb"]), rng.randint(-9, 9))
            except BadRequest:
                pass
    return layout


def tiles_exactly(layout: Layout) -> bool:
    """Every cell of the window is one pane's or a border's, and no two panes overlap."""
    seen: set[tuple[int, int]] = set()
    for p in layout.placements():
        cells = {(x, y) for x in range(p.x, p.x + p.columns) for y in range(p.y, p.y + p.lines)}
        if cells & seen or p.x + p.columns > layout.columns or p.y + p.lines > layout.lines:
            return False
        seen |= cells
    return True


@pytest.mark.parametrize("seed", range(40))
def test_window_resizes_come_back_exactly(seed: int) -> None:
    """Shrink and grow in any order: back at a size, the dividers are where they were; every
    size that can hold the panes is tiled exactly; the result never depends on the path."""
    rng = random.Random(seed)
    columns, lines = rng.randint(60, 220), rng.randint(20, 70)
    layout = random_layout(rng, columns, lines, rng.randint(2, 9))
    original = layout.dump({id(p.pane): p.pane.number for p in layout.placements()})
    numbers = {id(p.pane): p.pane.number for p in layout.placements()}
    sizes = [(rng.randint(1, 260), rng.randint(1, 90)) for _ in range(12)] + [(columns - 1, lines - 1)]
    for size in sizes:
        layout.resize(*size)
        here = layout.dump(numbers)
        least_columns, least_lines = layout.minimum_size()
        if size[0] >= least_columns and size[1] >= least_lines:
            assert tiles_exactly(layout), (seed, size)
        layout.resize(columns, lines)
        assert layout.dump(numbers) == original, (seed, size)
        layout.resize(*size)
        assert layout.dump(numbers) == here, (seed, size)  # the same size, the same layout
    layout.resize(columns, lines)
    assert layout.dump(numbers) == original


def test_one_column_at_a_time_never_drifts() -> None:
    """The drift the issue saw: an outer terminal dragged narrower a column at a time, then back."""
    a, b, c = P(0), P(1), P(2)
    layout = Layout(a, 120, 40)
    layout.split(a, b, horizontal=True)
    layout.split(b, c, horizontal=True, size=25)
    numbers = {id(a): 0, id(b): 1, id(c): 2}
    original = layout.dump(numbers)
    for columns in [*range(119, 40, -1), *range(41, 121)]:
        layout.resize(columns, 40)
        assert tiles_exactly(layout)
    assert layout.dump(numbers) == original


@pytest.mark.parametrize("seed", range(10))
def test_layout_strings_read_back_into_the_same_tree(seed: int) -> None:
    rng = random.Random(seed)
    layout = random_layout(rng, rng.randint(60, 200), rng.randint(20, 60), rng.randint(1, 8))
    panes = layout.panes()
    numbers = {id(p): p.number for p in panes}
    text = layout.dump(numbers)
    again = Layout(panes[0], 1, 1)
    again.set_root(parse_layout(text, panes))
    assert again.dump(numbers) == text


def test_layout_strings_are_checked_as_tmux_checks_them() -> None:
    a, b = P(0), P(1)
    good = "d463,159x48,0,0{79x48,0,0,0,79x48,80,0,1}"
    assert parse_layout(good, [a, b]).children[1].pane is b
    for bad in ("bb63,159x48,0,0{79x48,0,0,0,79x48,80,0,1}",   # checksum
                "159x48,0,0{79x48,0,0,0,79x48,80,0,1}",        # no checksum
                "d443,159x48,0,0{79x48,0,0,0,78x48,80,0,1}"):  # sizes that do not add up
        with pytest.raises(BadRequest, match="invalid layout"):
            parse_layout(bad, [a, b])
    with pytest.raises(BadRequest, match="have 3 panes but need 2"):
        parse_layout(good, [a, b, P(2)])


def test_size_arguments() -> None:
    assert size_in_cells("30", 80) == 30 and size_in_cells("25%", 81) == 20 and size_in_cells("100%", 7) == 7
    for bad in ("", "x", "-3", "30x", "101%", "%"):
        with pytest.raises(BadRequest, match="cells or a percentage"):
            size_in_cells(bad, 80)
