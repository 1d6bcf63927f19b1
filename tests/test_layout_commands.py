"""select-layout, swap-pane, join-pane, break-pane, respawn-pane, resize-pane in a split, and -d
on split-window / new-window: the `muxd` command line against a real daemon, with real tmux
doing the same commands at the same size as the oracle for the geometry."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from muxd.client.blocking import BlockingClient
from muxd.testing.server import MuxdTestServer
from muxd.testing.tmux_oracle import TmuxOracle
from muxd.testing.wait import wait_until

SLEEP = ["--", "sleep", "600"]


@pytest.fixture(scope="module")
def server() -> Iterator[MuxdTestServer]:
    """One daemon for the module: each test works in sessions of its own. The commands under test
    run as the `muxd` command; what the tests read back comes over one open connection (fast)."""
    s = MuxdTestServer().start()
    try:
        with BlockingClient.connect(s.socket_path) as client:
            _readers[s.name] = client
            yield s
    finally:
        _readers.pop(s.name, None)
        s.stop()


_readers: dict[str, BlockingClient] = {}


@pytest.fixture(scope="module")
def tmux() -> Iterator[TmuxOracle]:
    oracle = TmuxOracle()
    yield oracle
    oracle.close()


def muxd(s: MuxdTestServer, *args: str) -> str:
    return s.cli(*args, check=True).stdout


def panes(s: MuxdTestServer, target: str) -> list[dict]:
    return _readers[s.name].call("list-panes", "pane-list", target=target).panes


def windows(s: MuxdTestServer, session: str) -> list[dict]:
    return _readers[s.name].call("list-windows", "window-list", target=session).windows


def geometry(s: MuxdTestServer, target: str) -> list[tuple[int, int, int, int]]:
    """(left, top, width, height) of each pane, in pane index order."""
    return [(p["left"], p["top"], p["width"], p["height"]) for p in sorted(panes(s, target), key=lambda p: p["index"])]


def tmux_geometry(tmux: TmuxOracle, pane: int) -> list[tuple[int, int, int, int]]:
    out = tmux.run("list-panes", "-t", f"%{pane}", "-F", "#{pane_left} #{pane_top} #{pane_width} #{pane_height}")
    return [tuple(map(int, line.split())) for line in out.splitlines()]  # type: ignore[misc]


def failure(s: MuxdTestServer, *args: str) -> str:
    result = s.cli(*args)
    assert result.returncode != 0 and result.stdout == "", result
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr


def layout_body(layout: str, ids: dict[str, str]) -> str:
    """A #{window_layout} without its checksum, pane numbers mapped through `ids`."""
    body = layout.split(",", 1)[1]
    return re.sub(r"(\d+x\d+,\d+,\d+),(\d+)", lambda m: f"{m[1]},{ids.get(m[2], m[2])}", body)


def test_splits_and_layouts_give_tmuxs_geometry(server, tmux):
    s = server
    ours = [muxd(s, "new-session", "-d", "-s", "geo", "-x", "100", "-y", "30", "-P", *SLEEP).strip()]
    theirs = [f"%{tmux.new_window(100, 30)}"]
    steps = [  # {N}: the N-th pane made
        ("split-window", "-h", "-l", "30%", "-t", "{0}"),
        ("split-window", "-v", "-b", "-d", "-t", "{0}"),
        ("split-window", "-h", "-p", "25", "-t", "{1}"),
        ("select-layout", "-t", "{0}", "tiled"),
        ("select-layout", "-n", "-t", "{0}"),   # after tiled: the first, even-horizontal
        ("select-layout", "-p", "-t", "{0}"),   # back to tiled
        ("select-layout", "-t", "{0}", "main-h"),
        ("resize-pane", "-t", "{3}", "-L", "7"),
        ("resize-pane", "-t", "{0}", "-y", "10"),
        ("swap-pane", "-s", "{0}", "-t", "{3}"),
        ("select-layout", "-E", "-t", "{3}"),
        ("select-layout", "-t", "{0}", "main-vertical"),
        ("kill-pane", "-t", "{1}"),
        ("select-layout", "-t", "{0}"),         # no name: the last one again
        ("resize-pane", "-t", "{2}", "-x", "40%"),
    ]
    for step in steps:
        mine = [a.format(*ours) for a in step]
        tmuxs = [a.format(*theirs) for a in step]
        if step[0] == "split-window":
            ours.append(muxd(s, *mine, "-P", *SLEEP).strip())
            theirs.append(tmux.run(*tmuxs, "-P", "-F", "#{pane_id}", "sleep 600").strip())
        else:
            muxd(s, *mine)
            tmux.run(*tmuxs)
        assert geometry(s, "geo") == tmux_geometry(tmux, int(theirs[0][1:])), step
    ids = {t[1:]: o[1:] for t, o in zip(theirs, ours)}
    expected = layout_body(tmux.layout(int(theirs[0][1:])), ids)
    assert layout_body(windows(s, "geo")[0]["layout"], {}) == expected
    muxd(s, "kill-session", "-t", "geo")


def active(s: MuxdTestServer, target: str) -> str:
    return next(p["id"] for p in panes(s, target) if p["active"])


def test_minus_d_leaves_the_current_window_and_pane_alone(server):
    s = server
    first = muxd(s, "new-session", "-d", "-s", "dd", "-x", "80", "-y", "24", "-P", *SLEEP).strip()
    new = muxd(s, "split-window", "-d", "-h", "-t", first, "-P", *SLEEP).strip()
    assert active(s, "dd:0") == first and [p["id"] for p in panes(s, "dd:0")] == [first, new]
    muxd(s, "new-window", "-d", "-t", "dd", "-n", "background", *SLEEP)
    assert [(w["name"], w["active"]) for w in windows(s, "dd")] == [("sleep", True), ("background", False)]
    muxd(s, "new-window", "-t", "dd", "-n", "front", *SLEEP)
    assert [w["active"] for w in windows(s, "dd")] == [False, False, True]
    assert "no space for new pane" not in failure(s, "split-window", "-l", "3x", "-t", first)
    muxd(s, "kill-session", "-t", "dd")


def test_swap_pane_moves_panes_and_the_active_one_follows(server):
    s = server
    a = muxd(s, "new-session", "-d", "-s", "sw", "-x", "81", "-y", "24", "-P", *SLEEP).strip()
    b = muxd(s, "split-window", "-h", "-l", "20", "-t", a, "-P", *SLEEP).strip()
    c = muxd(s, "split-window", "-v", "-t", b, "-P", *SLEEP).strip()
    before = {p["id"]: (p["left"], p["top"], p["width"], p["height"]) for p in panes(s, "sw")}
    muxd(s, "swap-pane", "-s", a, "-t", c)  # c is active: it stays active, in a's old place
    after = {p["id"]: (p["left"], p["top"], p["width"], p["height"]) for p in panes(s, "sw")}
    assert (after[a], after[c], after[b]) == (before[c], before[a], before[b])
    assert active(s, "sw") == c and [p["id"] for p in panes(s, "sw")] == [c, b, a]
    muxd(s, "swap-pane", "-D", "-d", "-t", c)  # with the next pane (b); the active place stays
    assert [p["id"] for p in panes(s, "sw")] == [b, c, a] and active(s, "sw") == b
    muxd(s, "swap-pane", "-U", "-t", b)  # wraps to the last pane
    assert [p["id"] for p in panes(s, "sw")] == [a, c, b]
    muxd(s, "kill-session", "-t", "sw")


def test_join_pane_and_break_pane_move_panes_between_windows(server):
    s = server
    a = muxd(s, "new-session", "-d", "-s", "jb", "-x", "100", "-y", "30", "-P", *SLEEP).strip()
    b = muxd(s, "new-window", "-t", "jb", "-n", "other", "-P", *SLEEP).strip()
    muxd(s, "join-pane", "-h", "-l", "30", "-s", b, "-t", a)  # b's window had only b: it goes
    assert [w["name"] for w in windows(s, "jb")] == ["sleep"]
    assert geometry(s, "jb:0") == [(0, 0, 69, 30), (70, 0, 30, 30)] and active(s, "jb:0") == b
    assert "must be different" in failure(s, "join-pane", "-s", a, "-t", a)
    assert "can't find pane" in failure(s, "join-pane", "-s", "%999", "-t", a)

    out = json.loads(muxd(s, "break-pane", "-d", "-s", b, "-n", "alone", "--json"))
    assert out["id"] == b and (out["window_name"], out["width"], out["height"]) == ("alone", 100, 30)
    assert [(w["name"], w["active"]) for w in windows(s, "jb")] == [("sleep", True), ("alone", False)]
    assert geometry(s, "jb:0") == [(0, 0, 100, 30)]
    muxd(s, "break-pane", "-s", b, "-t", "jb:5")  # alone already: its window moves, and is current
    assert [(w["index"], w["name"], w["active"]) for w in windows(s, "jb")] == [(0, "sleep", False),
                                                                                (5, "alone", True)]
    assert "index in use" in failure(s, "break-pane", "-s", a, "-t", "jb:5")
    muxd(s, "kill-session", "-t", "jb")


def test_respawn_pane_refuses_a_running_pane_and_restarts_an_exited_one(server):
    s = server
    pane = muxd(s, "new-session", "-d", "-s", "rs", "-x", "80", "-y", "24", "-P", "--",
                "sh", "-c", "echo first-run; exit 3").strip()
    wait_until(lambda: panes(s, "rs")[0]["status"] == "exited", timeout=10, message="first program exit")
    assert panes(s, "rs")[0]["exit_code"] == 3
    muxd(s, "respawn-pane", "-t", pane, "-c", "/usr", "-e", "WHO=second", "--",
         "sh", "-c", 'echo "$WHO-run in $PWD"; exec sleep 600')
    s.wait_for_text(pane, "second-run in /usr")
    info = panes(s, "rs")[0]
    assert (info["id"], info["status"], info["exit_code"]) == (pane, "running", None)
    assert "first-run" not in s.capture(pane)  # the screen was reset (the history keeps it)
    assert failure(s, "respawn-pane", "-t", pane).strip() == "muxd: respawn pane failed: pane rs:0.0 still active"
    old_pid = info["pid"]
    muxd(s, "respawn-pane", "-k", "-t", pane, "--", "sh", "-c", "echo third-run; exec sleep 600")
    s.wait_for_text(pane, "third-run")
    assert panes(s, "rs")[0]["pid"] != old_pid
    wait_until(lambda: not _alive(old_pid), timeout=10, message="the killed program gone")
    muxd(s, "kill-session", "-t", "rs")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_resize_pane_moves_the_divider_or_says_why_not(server):
    s = server
    a = muxd(s, "new-session", "-d", "-s", "rz", "-x", "100", "-y", "30", "-P", *SLEEP).strip()
    b = muxd(s, "split-window", "-h", "-t", a, "-P", *SLEEP).strip()
    muxd(s, "resize-pane", "-t", a, "-x", "30")
    assert geometry(s, "rz") == [(0, 0, 30, 30), (31, 0, 69, 30)]
    muxd(s, "resize-pane", "-t", b, "-L", "5")
    assert geometry(s, "rz") == [(0, 0, 25, 30), (26, 0, 74, 30)]
    muxd(s, "resize-pane", "-t", b, "-R")  # one cell by default
    assert geometry(s, "rz")[0] == (0, 0, 26, 30)
    assert "no pane above or below" in failure(s, "resize-pane", "-t", a, "-y", "10")
    muxd(s, "resize-pane", "-Z", "-t", b)
    assert geometry(s, "rz")[1] == (0, 0, 100, 30) and active(s, "rz") == b
    muxd(s, "resize-pane", "-Z", "-t", b)
    assert geometry(s, "rz") == [(0, 0, 26, 30), (27, 0, 73, 30)]
    assert "cells or a percentage" in failure(s, "resize-pane", "-t", a, "-x", "wide")
    muxd(s, "kill-pane", "-t", b)
    muxd(s, "resize-pane", "-t", a, "-x", "90", "-y", "20")  # alone: the window follows
    assert geometry(s, "rz") == [(0, 0, 90, 20)]
    assert "alone in its window" in failure(s, "resize-pane", "-t", a, "-U", "2")
    assert "invalid layout" in failure(s, "select-layout", "-t", a, "spiral")
    muxd(s, "kill-session", "-t", "rz")
