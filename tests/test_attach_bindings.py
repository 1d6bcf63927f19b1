"""tmux's other prefix bindings in a real outer terminal (a pane of a private tmux server):
`o ; l &` (panes and windows), `q` (pane numbers), `w s` (the chooser with the agents' states),
`:` (the command prompt); and the nested-attach refusal inside a muxd pane.

One daemon serves the module; each test has sessions of its own.
"""

from __future__ import annotations

import json
import re

import pytest

from muxd.config import DISPLAY_PANES_S
from muxd.testing.fake_agent_panes import agent_state, start_fake_agent
from muxd.testing.outer_terminal import attached_terminal as attached
from muxd.testing.outer_terminal import OuterTerminal, muxd_command, outer_terminals, status_line
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
LINES = 30


@pytest.fixture
def server(muxd_module_server):
    return muxd_module_server


@pytest.fixture
def outer(server):
    with outer_terminals(server) as make:
        yield make


def active_pane(server: MuxdTestServer, session: str) -> str:
    window = next(w for w in server.windows(session) if w["active"])
    return next(p["id"] for p in server.panes(f"{session}:{window['index']}") if p["active"])




def keys_at_once(term: OuterTerminal, *names: str) -> None:
    """Keys in one tmux command, so they reach muxd together."""
    term.tmux("send-keys", "-t", "outer", *names)


def last_pane(term: OuterTerminal) -> None:
    term.keys("C-b")
    term.send_hex(b";")  # a lone ";" would end tmux's send-keys command


def test_next_and_last_pane_last_window_and_kill_window(server, outer):
    server.cli("new-session", "-d", "-s", "oll", *SHELL, check=True)
    term = attached(outer, server, "oll")
    last_pane(term)
    term.wait_for("no last pane")
    term.keys("C-b", "%")
    term.keys("C-b", '"')
    wait_until(lambda: len(server.panes("oll")) == 3, timeout=5, message="two splits")
    first, second, third = (p["id"] for p in server.panes("oll"))
    assert active_pane(server, "oll") == third

    term.keys("C-b", "o")  # after the last pane comes the first
    wait_until(lambda: active_pane(server, "oll") == first, timeout=5, message="o: first pane")
    term.keys("C-b", "o")
    wait_until(lambda: active_pane(server, "oll") == second, timeout=5, message="o: second pane")
    last_pane(term)  # back to the one active before
    wait_until(lambda: active_pane(server, "oll") == first, timeout=5, message="; : first pane")
    last_pane(term)
    wait_until(lambda: active_pane(server, "oll") == second, timeout=5, message="; : second again")
    term.keys("C-b", "z", "C-b", "o")  # a zoomed window unzooms to move, as in tmux
    term.wait_for(lambda sc: "│" in sc and "Z" not in status_line(sc))
    wait_until(lambda: active_pane(server, "oll") == third, timeout=5, message="o out of zoom")

    term.keys("C-b", "l")
    term.wait_for("no last window")
    term.keys("C-b", "c")
    term.wait_for(lambda sc: re.search(r"0:\S*- 1:\S*\*", status_line(sc)))
    term.keys("C-b", "l")
    term.wait_for(lambda sc: re.search(r"0:\S*\* 1:\S*-", status_line(sc)))
    term.keys("C-b", "l")
    term.wait_for(lambda sc: re.search(r"0:\S*- 1:\S*\*", status_line(sc)))

    term.keys("C-b", "&")
    term.wait_for(lambda sc: re.search(r"kill-window \S+\? \(y/n\)", status_line(sc)))
    term.keys("n")
    term.wait_for(lambda sc: "(y/n)" not in sc)
    assert len(json.loads(server.cli("list-windows", "-t", "oll", "--json", check=True).stdout)) == 2
    term.keys("C-b", "&")
    term.wait_for("(y/n)")
    term.keys("y")
    term.wait_for(lambda sc: re.search(r"\[oll\] 0:\S*\*\s*$", status_line(sc).split("  ")[0]))
    assert [p["id"] for p in server.panes("oll")] == [first, second, third]
    term.keys("C-b", "d")
    term.wait_for("[detached")


def test_pane_numbers_show_and_a_digit_selects(server, outer):
    server.cli("new-session", "-d", "-s", "num", *SHELL, check=True)
    term = attached(outer, server, "num")
    term.keys("C-b", "%")
    wait_until(lambda: len(server.panes("num")) == 2, timeout=5, message="split")
    left, right = (p["id"] for p in server.panes("num"))

    # Big digits: "0" in blue on the left pane, "1" in red on the active right one. They show
    # for a second only: a loaded machine may look too late, then it asks again.
    for attempt in range(5):
        term.keys("C-b", "q")
        try:
            shown = term.wait_for(lambda sc: "\x1b[41m" in sc and "\x1b[44m" in sc, escapes=True,
                                  timeout=DISPLAY_PANES_S)
            break
        except AssertionError:
            if attempt == 4:
                raise
    rows = shown.split("\n")
    middle = next(row for row in rows if "\x1b[44m" in row)
    assert middle.index("\x1b[44m") < middle.index("\x1b[41m")
    # …and they go by themselves.
    term.wait_for(lambda sc: "\x1b[41m" not in sc and "\x1b[44m" not in sc, escapes=True, timeout=5)

    keys_at_once(term, "C-b", "q", "0")  # a digit while they show (one write: within the second): that pane
    wait_until(lambda: active_pane(server, "num") == left, timeout=5, message="pane 0 selected")
    keys_at_once(term, "C-b", "q", "Right")  # any other key: the numbers go and the key does its work
    term.wait_for(lambda sc: "\x1b[41m" not in sc, escapes=True)
    term.type("echo typed-$((2+3))", enter=True)
    wait_until(lambda: "typed-5" in server.capture(left), timeout=5, message="keys reach the pane")
    assert active_pane(server, "num") == left and "typed-5" not in server.capture(right)
    term.keys("C-b", "d")
    term.wait_for("[detached")


def test_chooser_shows_agents_states_and_switches(muxd_server):
    """A server of its own: the chooser lists every session, so others' would move the rows."""
    with outer_terminals(muxd_server) as make:
        _choose(muxd_server, make)


def _choose(server: MuxdTestServer, outer) -> None:
    agent = start_fake_agent(server, "agents", "claude")
    server.cli("send-keys", "-t", agent, "tool", "Enter", check=True)
    wait_until(lambda: agent_state(server, agent) == "AwaitingConfirmation", timeout=20,
               message="the fake claude asks")
    server.cli("new-session", "-d", "-s", "home", *SHELL, check=True)
    server.cli("new-window", "-t", "home", "-n", "second", *SHELL[1:], check=True)
    term = attached(outer, server, "home")

    term.keys("C-b", "w")  # every session with its windows; the current window selected
    screen = term.wait_for("claude: waiting for yes")
    assert re.search(r"\(\d\) - agents: 1 window", screen) and re.search(r"\(\d\) - home: 2 windows \(attached\)",
                                                                       screen)
    assert re.search(r"\(\d\)\s+└─> 1: second\* \(1 pane\)", screen)
    selected = term.wait_for("\x1b[43m", escapes=True)
    assert "1: second*" in next(row for row in selected.split("\n") if "\x1b[43m" in row)
    term.keys("k")
    term.wait_for(lambda sc: "0: bash-" in next(r for r in sc.split("\n") if "\x1b[43m" in r), escapes=True)
    term.keys("Enter")
    term.wait_for(lambda sc: re.search(r"0:bash\* 1:second-", status_line(sc)))

    term.keys("C-b", "s")  # sessions only; Right opens one, Enter on a window switches to it
    screen = term.wait_for(lambda sc: "+ home: 2 windows" in sc)
    assert re.search(r"\+ agents: 1 window\s+claude: waiting for yes", screen)
    term.keys("Up")  # the agents session: below the list, the end of its pane's screen
    screen = term.wait_for(f"─ {agent} ─")
    assert screen.index(f"─ {agent} ─") < screen.index(server.capture(agent).rstrip().split("\n")[-1].strip())
    term.keys("Right", "Down", "Enter")  # open it, its window 0
    term.wait_for(lambda sc: status_line(sc).startswith("[agents]"))
    term.keys("C-b", "s")
    term.wait_for("+ home")
    term.keys("q")
    term.wait_for(lambda sc: "+ home" not in sc and status_line(sc).startswith("[agents]"))
    term.keys("C-b", "s", "j", "Enter")  # a session's row: that session, as it was
    term.wait_for(lambda sc: re.search(r"^\[home\] 0:bash\* 1:second-", status_line(sc)))
    term.keys("C-b", "s", "0")  # a row's number chooses it at once
    term.wait_for(lambda sc: status_line(sc).startswith("[agents]"))
    term.keys("C-b", "d")
    term.wait_for("[detached (from session agents)]")


def test_command_prompt_runs_muxd_commands_on_the_current_pane(server, outer):
    server.cli("new-session", "-d", "-s", "cmd", *SHELL, check=True)
    term = attached(outer, server, "cmd")
    (first,) = (p["id"] for p in server.panes("cmd"))

    term.keys("C-b", ":")
    term.wait_for(lambda sc: status_line(sc).startswith(":"))
    term.type("split-window -h -P")  # no -t: the active pane; its one line of output shows
    term.keys("Enter")
    wait_until(lambda: len(server.panes("cmd")) == 2, timeout=10, message="split from the prompt")
    new = next(p for p in server.panes("cmd") if p["id"] != first)
    assert new["width"] < 100
    term.wait_for(lambda sc: new["id"] in status_line(sc))

    term.keys("C-b", ":")
    term.type("list-panes")  # longer output: a view over the window, q leaves
    term.keys("Enter")
    term.wait_for(lambda sc: first in sc and new["id"] in sc and "│" not in sc)
    term.keys("q")
    term.wait_for(lambda sc: "│" in sc)
    term.keys("C-b", ":", "Up")  # the line before, the cursor at its end
    term.wait_for(lambda sc: status_line(sc).rstrip() == ":list-panes")
    wait_until(lambda: term.tmux("display-message", "-p", "-t", "outer", "#{cursor_x},#{cursor_y}").strip()
               == f"11,{LINES - 1}", timeout=5, message="the cursor after the text")
    term.keys("Escape")
    term.wait_for(lambda sc: status_line(sc).startswith("[cmd]"))

    term.keys("C-b", ":")
    term.type("kill-pane -t %99999")
    term.keys("Enter")
    term.wait_for(lambda sc: "can't find pane: %99999" in status_line(sc))
    term.keys("C-b", ":")
    term.type("no-such-command")
    term.keys("Enter")
    term.wait_for(lambda sc: "unknown command 'no-such-command'" in status_line(sc))

    # As in tmux, new-session and attach switch this client rather than need a terminal.
    term.keys("C-b", ":")
    term.type("new -s fresh -- bash --norc --noprofile")
    term.keys("Enter")
    term.wait_for(lambda sc: status_line(sc).startswith("[fresh]"))
    term.keys("C-b", ":")
    term.type("attach -t cmd")
    term.keys("Enter")
    term.wait_for(lambda sc: status_line(sc).startswith("[cmd]"))
    server.cli("kill-session", "-t", "fresh", check=True)

    term.keys("C-b", ":")
    term.type("kill-pane")  # the current pane, as tmux's prompt would
    term.keys("Enter")
    wait_until(lambda: [p["id"] for p in server.panes("cmd")] == [first], timeout=10, message="pane killed")
    term.keys("C-b", "d")
    term.wait_for("[detached")


def test_attaching_inside_a_pane_of_the_same_server_is_refused(server):
    server.cli("new-session", "-d", "-s", "nest", *SHELL, check=True)
    server.cli("new-session", "-d", "-s", "other", *SHELL, check=True)

    def run(line: str, expect: str) -> str:
        server.cli("send-keys", "-t", "nest", line, "Enter", check=True)
        return server.wait_for_text("nest", expect)

    for n, args in enumerate((("attach", "-t", "other"), (), ("new", "-s", "inner"))):
        screen = run(f"{muxd_command(server.name, *args)}; echo rc{n}=$?", f"rc{n}=1")
        assert screen.count("muxd: sessions should be nested with care, unset $MUXD to force") == n + 1
    assert "inner" not in server.cli("list-sessions", check=True).stdout  # nothing was created
    server.cli("send-keys", "-t", "nest", "clear", "Enter", check=True)
    wait_until(lambda: "nested" not in server.capture("nest"), timeout=5, message="cleared")
    # Another server is no nesting: that attach goes ahead (and finds no server).
    screen = run(f"{muxd_command('elsewhere', 'attach')}; echo rc=$?", "rc=1")
    assert "no server running" in screen and "nested" not in screen
    # Forced: with $MUXD unset it attaches (here to another session of the same server).
    run(f"env -u MUXD {muxd_command(server.name, 'attach', '-t', 'other')}", "[other]")
    server.cli("kill-session", "-t", "other", check=True)
    server.wait_for_text("nest", "[exited]")
    run("echo back-$((1+1))", "back-2")  # the inner client ended with its session
