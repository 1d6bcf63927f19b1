"""Layout keys in a real outer terminal (a pane of a private tmux server): C-b Space, { } and !,
and split dividers that come back to the same column when the terminal shrinks and grows."""

from __future__ import annotations

import json

from muxd.testing.outer_terminal import muxd_command, outer_terminals
from muxd.testing.wait import wait_until

SLEEP = ["--", "sleep", "600"]


def geometry(s, target: str) -> list[tuple[str, int, int, int, int]]:
    panes = json.loads(s.cli("list-panes", "-t", target, "--json", check=True).stdout)
    return [(p["id"], p["left"], p["top"], p["width"], p["height"]) for p in sorted(panes, key=lambda p: p["index"])]


def dividers(screen: str, row: int) -> list[int]:
    return [x for x, char in enumerate(screen.split("\n")[row]) if char == "│"]


def test_layout_keys_and_dividers_through_shrink_and_grow(muxd_server):
    s = muxd_server
    a = s.cli("new-session", "-d", "-s", "work", "-P", *SLEEP, check=True).stdout.strip()
    with outer_terminals(s) as outer:
        term = outer(100, 30)
        term.type(muxd_command(s.name, "attach", "-t", "work"), enter=True)
        term.wait_for("[work]")
        b = s.cli("split-window", "-h", "-t", a, "-P", *SLEEP, check=True).stdout.strip()
        c = s.cli("split-window", "-v", "-t", b, "-P", *SLEEP, check=True).stdout.strip()  # active

        term.keys("C-b", "Space")  # the first layout: even-horizontal, 3 x 32..34 columns
        even = [(a, 0, 0, 32, 29), (b, 33, 0, 32, 29), (c, 66, 0, 34, 29)]
        wait_until(lambda: geometry(s, "work:0") == even, timeout=5, message="even-horizontal")
        term.wait_for(lambda sc: dividers(sc, 10) == [32, 65])

        term.keys("C-b", "}")  # swap-pane -D: c trades places with the pane after it (a, wrapping)
        wait_until(lambda: [g[0] for g in geometry(s, "work:0")] == [c, b, a], timeout=5, message="swap down")
        assert geometry(s, "work:0")[0] == (c, 0, 0, 32, 29)
        term.keys("C-b", "{")  # swap-pane -U: back
        wait_until(lambda: [g[0] for g in geometry(s, "work:0")] == [a, b, c], timeout=5, message="swap up")

        term.keys("C-b", "!")  # break-pane: c gets a window of its own, which becomes current
        term.wait_for(lambda sc: "1:sleep*" in sc.split("\n")[29])
        assert geometry(s, "work:1") == [(c, 0, 0, 100, 29)]
        term.keys("C-b", "0")
        term.wait_for(lambda sc: "0:sleep*" in sc.split("\n")[29])

        s.cli("resize-pane", "-t", a, "-x", "23", check=True)  # an uneven divider, put by hand
        before = geometry(s, "work:0")
        assert before == [(a, 0, 0, 23, 29), (b, 24, 0, 76, 29)]
        term.wait_for(lambda sc: dividers(sc, 5) == [23])
        for columns, lines in [(99, 29), (97, 28), (71, 17), (40, 12), (100, 30)]:
            term.resize(columns, lines)
            wait_until(lambda: sum(g[3] for g in geometry(s, "work:0")) + 1 == columns, timeout=5,
                       message=f"window follows the terminal to {columns}x{lines}")
        assert geometry(s, "work:0") == before
        term.wait_for(lambda sc: dividers(sc, 5) == [23])
