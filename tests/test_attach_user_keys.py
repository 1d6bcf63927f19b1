"""bind-key and unbind-key in a real outer terminal (a pane of a private tmux server): keys
bound after the prefix and alone (-n), default keys unbound and bound to what needs a client
(choose-tree, send-prefix), and `;` between commands at the `C-b :` prompt.

Bindings are the server's: each test has a daemon of its own.
"""

from __future__ import annotations

import pytest

from muxd.testing.outer_terminal import attached_terminal as attached
from muxd.testing.outer_terminal import outer_terminals, status_line
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
LINES = 30


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make




def test_bound_keys_run_their_commands_and_unbound_ones_nothing(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "keys", *SHELL, check=True)
    s.cli("bind-key", "|", "split-window", "-h", check=True)
    s.cli("bind", "-n", "F6", "new-window", "-d", *SHELL[1:], check=True)
    s.cli("unbind", "c", check=True)
    term = attached(outer, s, "keys")

    term.keys("C-b", "|")  # a muxd command: the active pane is its -t
    wait_until(lambda: len(s.panes("keys:0")) == 2, timeout=10, message="C-b | split the pane")
    assert all(p["width"] < 100 for p in s.panes("keys:0")), "side by side"

    term.keys("F6")  # bound alone: no prefix, and the program does not see it
    wait_until(lambda: len(s.windows("keys")) == 2, timeout=10, message="F6 made a window")
    term.type("echo typed-$((6*7))", enter=True)  # with a root table, other keys still reach the pane
    term.wait_for("typed-42")
    assert "\x1b[17~" not in s.capture(next(p["id"] for p in s.panes("keys:0") if p["active"]))

    term.keys("C-b", "c")  # unbound: nothing; then a key that does something, to know c was read
    term.keys("C-b", "|")
    wait_until(lambda: len(s.panes("keys:0")) == 3, timeout=10, message="the second split")
    assert len(s.windows("keys")) == 2, "C-b c made no window"

    term.keys("C-b", "?")  # the list shows the user's table: c gone (it heads tmux's), | bound, F6 alone
    screen = term.wait_for("Key bindings")
    assert "C-b c " not in screen and "C-b n      next window" in screen
    term.keys("G")
    term.wait_for(lambda sc: "C-b |      split-window -h" in sc and "F6            new-window -d" in sc)
    term.keys("q")
    term.wait_for(lambda sc: "Key bindings" not in sc and "split-window -h" not in sc)


def test_keys_bound_to_client_commands_and_prompt_lines_with_semicolons(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "cli", *SHELL, check=True)
    s.cli("bind", "v", "choose-tree", "-Zw", check=True)  # a default key's command: what that key does
    s.cli("bind", "a", "send-prefix", check=True)
    term = attached(outer, s, "cli")

    term.keys("C-b", "v")
    term.wait_for("cli: 1 window (attached)")
    term.keys("q")
    term.wait_for(lambda sc: "(attached)" not in sc and status_line(sc).startswith("[cli]"))

    term.type("cat -v", enter=True)
    term.keys("C-b", "a", "Enter")  # the prefix itself, to the program
    term.wait_for("^B")
    term.keys("C-c")

    term.keys("C-b", ":")
    term.wait_for(lambda sc: status_line(sc).startswith(":"))
    term.type("new-window -d -n other ; split-window -h")
    term.keys("Enter")
    wait_until(lambda: len(s.panes("cli:0")) == 2 and len(s.windows("cli")) == 2, timeout=10,
               message="both commands of the line ran")
    term.keys("C-b", ":")
    term.type("kill-pane -t %99999 ; new-window -d")  # the first fails: the line stops there
    term.keys("Enter")
    term.wait_for(lambda sc: "can't find pane: %99999" in status_line(sc))
    assert len(s.windows("cli")) == 2


def test_arrow_keys_repeat_within_repeat_time_and_resize_with_meta_and_control(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "rep", *SHELL, check=True)
    left = s.panes("rep")[0]["id"]
    s.cli("split-window", "-h", "-t", "rep", *SHELL, check=True)
    right = next(p["id"] for p in s.panes("rep") if p["id"] != left)
    s.cli("set", "-g", "repeat-time", "10000", check=True)  # long: a slow machine still repeats
    term = attached(outer, s, "rep")

    def active() -> str:
        return next(p["id"] for p in s.panes("rep") if p["active"])

    def left_width() -> int:
        return next(p["width"] for p in s.panes("rep") if p["id"] == left)

    term.keys("C-b", "Left", "Right")  # the second arrow repeats: no prefix
    wait_until(lambda: active() == right, timeout=10, message="Right repeated without the prefix")
    width = left_width()
    term.keys("C-b", "M-Left", "C-Left")  # the right pane grows 5 cells, then 1 more (repeated)
    wait_until(lambda: left_width() == width - 6, timeout=10, message="M-Left by 5, C-Left by 1")
    term.type("echo typed-$((2*21))", enter=True)  # another key ends the repeat and is typed
    s.wait_for_text(right, "typed-42")

    s.cli("set", "-g", "repeat-time", "0", check=True)
    term.keys("C-b", "Left", "Right")  # no repeat-time: Right goes to the program
    term.type("echo still-$((6*7))", enter=True)
    s.wait_for_text(left, "still-42")
    assert active() == left


def test_pane_numbers_count_from_pane_base_index(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "num", *SHELL, check=True)
    s.cli("split-window", "-t", "num", *SHELL, check=True)
    first, second = (p["id"] for p in s.panes("num"))
    s.cli("setw", "-g", "pane-base-index", "1", check=True)
    term = attached(outer, s, "num")
    term.keys("C-b", "q", "1")  # the first pane is 1 now
    wait_until(lambda: next(p["id"] for p in s.panes("num") if p["active"]) == first, timeout=10,
               message="C-b q 1 chose the first pane")
    term.keys("C-b", "q", "2")
    wait_until(lambda: next(p["id"] for p in s.panes("num") if p["active"]) == second, timeout=10,
               message="C-b q 2 chose the second pane")
