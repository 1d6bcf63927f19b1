"""The layout tree of a window (muxd/daemon/layouts/layout.py): splits, removal, resize, neighbours."""

import pytest

from muxd.daemon.layouts.layout import Layout
from muxd.errors import BadRequest


class P:
    def __init__(self, name):
        self.id = name

    def __repr__(self):
        return self.id


def rects(layout):
    return {p.pane.id: (p.x, p.y, p.columns, p.lines) for p in layout.placements()}


def covered_exactly(layout):
    """Every cell of the window is in one pane or a border, and panes never overlap."""
    seen = set()
    for p in layout.placements():
        cells = {(x, y) for x in range(p.x, p.x + p.columns) for y in range(p.y, p.y + p.lines)}
        assert not cells & seen, "overlapping panes"
        seen |= cells
        assert p.x + p.columns <= layout.columns and p.y + p.lines <= layout.lines
    return seen


def test_split_left_right_then_top_bottom_like_tmux():
    a, b, c = P("a"), P("b"), P("c")
    layout = Layout(a, 100, 29)
    layout.split(a, b, horizontal=True)
    assert rects(layout) == {"a": (0, 0, 50, 29), "b": (51, 0, 49, 29)}
    layout.split(b, c, horizontal=False)
    assert rects(layout) == {"a": (0, 0, 50, 29), "b": (51, 0, 49, 14), "c": (51, 15, 49, 14)}
    covered_exactly(layout)


def test_neighbours_in_each_direction():
    a, b, c, d = P("a"), P("b"), P("c"), P("d")
    layout = Layout(a, 100, 29)
    layout.split(a, b, True)
    layout.split(b, c, False)
    layout.split(c, d, True)
    assert layout.neighbour(a, "right") is b
    assert layout.neighbour(c, "up") is b
    assert layout.neighbour(d, "left") is c
    assert layout.neighbour(c, "left") is a
    assert layout.neighbour(a, "left") is None
    assert layout.neighbour(b, "down") in (c, d)


def test_removing_a_pane_gives_its_space_and_border_to_a_neighbour():
    a, b, c = P("a"), P("b"), P("c")
    layout = Layout(a, 80, 24)
    layout.split(a, b, True)
    layout.split(b, c, False)
    layout.remove(c)
    assert rects(layout) == {"a": (0, 0, 40, 24), "b": (41, 0, 39, 24)}
    layout.remove(a)
    assert rects(layout) == {"b": (0, 0, 80, 24)}
    with pytest.raises(BadRequest):
        layout.remove(b)


def test_resize_keeps_proportions_and_survives_extremes():
    a, b, c = P("a"), P("b"), P("c")
    layout = Layout(a, 100, 30)
    layout.split(a, b, True)
    layout.split(a, c, False)
    layout.resize(200, 60)
    r = rects(layout)
    assert r["a"][2] + 1 + r["b"][2] == 200 and abs(r["a"][2] - r["b"][2]) <= 2
    assert r["a"][3] + 1 + r["c"][3] == 60
    covered_exactly(layout)
    layout.resize(1, 1)
    assert all(p.columns >= 1 and p.lines >= 1 for p in layout.placements())
    layout.resize(500, 200)
    covered_exactly(layout)
    assert sum(p.columns for p in layout.placements() if p.y == 0) + 1 == 500


def test_split_too_small_is_a_typed_error():
    a, b = P("a"), P("b")
    layout = Layout(a, 4, 3)
    with pytest.raises(BadRequest, match="too small"):
        layout.split(a, b, False)
    assert rects(layout) == {"a": (0, 0, 4, 3)}
