"""`muxd attach` in a real outer terminal (a pane of a private tmux server), driven like a user.

The daemon is the plugin's isolated `muxd_server`; keys go in with `tmux send-keys`, the screen
comes back with `tmux capture-pane`. Every wait is on a condition with a timeout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys

import pytest

from muxd.daemon.panes.shell_command import default_shell
from muxd.testing.outer_terminal import OuterTerminal, muxd_command, outer_terminals, status_line
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def panes(server):
    """Read back in this process (waits poll it: a CLI a look is a load of its own)."""
    return json.loads(server.run_here("list-panes", "-a", "--json", check=True).stdout)


def attach(terminal: OuterTerminal, server, *args: str, session: str = "work") -> None:
    terminal.type(muxd_command(server.name, "attach", *args), enter=True)
    terminal.wait_for(f"[{session}]")


def stty_saved(path) -> bool:
    """The shell wrote `stty -g` into `path` (it exists, empty, before stty writes)."""
    return path.exists() and path.read_text().endswith("\n")


def test_attach_type_detach_and_reattach_exactly(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    s.cli("new-window", "-t", "work", "-n", "counter", "--", "sh", "-c",
          'i=0; while :; do i=$((i+1)); printf "\\033[32mtick\\033[0m %d\\n" $i; sleep 0.1; done', check=True)
    s.cli("send-keys", "-t", "work:0", "printf '\\033[31mred\\033[0m \\033[38;2;1;2;3mtrue\\033[0m\\n'", "Enter",
          check=True)
    term = outer()
    term.type(f"stty -g > {tmp_path}/before; " + muxd_command(s.name, "attach", "-t", "work")
              + f"; stty -g > {tmp_path}/after", enter=True)
    screen = term.wait_for("[work]")
    assert re.search(r"^\[work\] 0:\S*- 1:counter\*", status_line(screen), re.M), status_line(screen)
    term.wait_for("tick")  # the counter window is the active one

    term.keys("C-b", "0")
    term.wait_for(lambda sc: "0:bash*" in status_line(sc))
    term.type("echo hi-$((6*7))", enter=True)
    screen = term.wait_for("hi-42\n")
    coloured = term.screen(escapes=True)
    assert "red" in coloured and re.search(r"\x1b\[(?:\d+;)*31m", coloured)  # colours reach the terminal
    assert re.search(r"\x1b\[(?:\d+;)*38;2;1;2;3m", coloured)  # true colour kept (an SGR, not the echoed text)

    term.keys("C-b", "d")
    term.wait_for("[detached (from session work)]")
    wait_until(lambda: stty_saved(tmp_path / "after"), timeout=5, message="client exit")
    assert (tmp_path / "after").read_text() == (tmp_path / "before").read_text()  # terminal restored

    def count() -> int:
        found = re.findall(r"tick (\d+)", s.capture("work:1"))
        return int(found[-1]) if found else 0

    before = count()
    wait_until(lambda: count() > before + 2, timeout=5, message="counter still counting after detach")

    inner = s.capture("work:0", "-e")
    term.type(muxd_command(s.name, "attach", "-t", "work"), enter=True)
    screen = term.wait_for("hi-42")
    rows = screen.split("\n")
    for expected in s.capture("work:0").rstrip("\n").split("\n"):
        assert expected.rstrip() in [r.rstrip() for r in rows[:29]]
    assert "\x1b[31mred" in inner and "\x1b[31mred" in term.screen(escapes=True).replace("\x1b[39m", "")
    term.keys("C-b", "d")
    term.wait_for("[detached")


def test_prefix_keys_windows_splits_zoom_rename_kill(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    attach(term, s)

    term.keys("C-b", "%")  # left | right
    wait_until(lambda: len(panes(s)) == 2, timeout=5, message="split")
    left, right = panes(s)
    assert (left["width"], right["width"], left["height"]) == (50, 49, 29)
    term.wait_for(lambda sc: all(len(row) > 50 and row[50] == "│" for row in sc.split("\n")[:29]))

    term.keys("C-b", '"')  # split the right pane top / bottom
    wait_until(lambda: len(panes(s)) == 3, timeout=5, message="second split")
    by_id = {p["id"]: p for p in panes(s)}
    new = [p for p in panes(s) if p["id"] not in (left["id"], right["id"])][0]
    assert by_id[right["id"]]["height"] + new["height"] + 1 == 29
    assert new["active"]
    term.wait_for(lambda sc: "─" in sc.split("\n")[by_id[right["id"]]["height"]])

    term.keys("C-b", "Left")
    wait_until(lambda: next(p for p in panes(s) if p["active"])["id"] == left["id"], timeout=5,
               message="left pane active")
    term.keys("C-b", "Right")
    wait_until(lambda: next(p for p in panes(s) if p["active"])["id"] != left["id"], timeout=5,
               message="right side active")
    term.keys("C-b", "Up")
    wait_until(lambda: next(p for p in panes(s) if p["active"])["id"] == right["id"], timeout=5,
               message="upper right active")
    # The programs see their sizes.
    term.type("stty size", enter=True)
    term.wait_for(f"{by_id[right['id']]['height']} 49")

    term.keys("C-b", "z")
    wait_until(lambda: next(p for p in panes(s) if p["id"] == right["id"])["width"] == 100, timeout=5,
               message="zoomed")
    term.wait_for(lambda sc: "Z" in status_line(sc) and "│" not in sc)
    term.keys("C-b", "z")
    wait_until(lambda: next(p for p in panes(s) if p["id"] == right["id"])["width"] == 49, timeout=5,
               message="unzoomed")

    term.keys("C-b", "c")
    term.wait_for(lambda sc: re.search(r"0:\S*- 1:\S+\*", status_line(sc)))
    term.keys("C-b", "p")
    term.wait_for(lambda sc: re.search(r"0:\S+\* 1:\S+-", status_line(sc)))
    term.keys("C-b", "n")
    term.wait_for(lambda sc: re.search(r"1:\S+\*", status_line(sc)))
    term.keys("C-b", "0")
    term.wait_for(lambda sc: re.search(r"0:\S+\*", status_line(sc)))

    term.keys("C-b", ",")
    term.wait_for("(rename-window)")
    term.keys(*["BSpace"] * 12)
    term.type("editor")
    term.keys("Enter")
    term.wait_for(lambda sc: "0:editor*" in status_line(sc))
    assert "editor" in s.cli("list-windows", "-t", "work", check=True).stdout

    term.keys("C-b", "?")
    screen = term.wait_for("Key bindings")
    assert "Press q to leave this view." not in screen  # the list is taller than the window…
    term.keys("G")  # …and scrolls like copy mode
    term.wait_for(lambda sc: "Press q to leave this view." in sc and "Key bindings" not in sc)
    term.keys("q")
    term.wait_for(lambda sc: "Key bindings" not in sc)

    term.keys("C-b", "Q")  # unbound: nothing happens, the next keys still type into the pane
    term.type("echo still-$((1+1))", enter=True)
    term.wait_for("still-2")

    active = next(p for p in panes(s) if p["active"])["id"]
    term.keys("C-b", "x")
    term.wait_for(f"kill-pane {active}? (y/n)")
    term.keys("n")
    term.wait_for(lambda sc: "(y/n)" not in sc)
    assert active in [p["id"] for p in panes(s)]
    term.keys("C-b", "x")
    term.wait_for("(y/n)")
    term.keys("y")
    wait_until(lambda: active not in [p["id"] for p in panes(s)], timeout=5, message="pane killed")
    # Its space went to the neighbour.
    wait_until(lambda: next(p for p in panes(s) if p["id"] == new["id"])["height"] == 29, timeout=5,
               message="neighbour grew")


RAW_ECHO = r"""
import os, sys, tty
tty.setraw(0)
os.write(1, b"ready\r\n")
while True:
    os.write(1, repr(os.read(0, 1024)).encode() + b"\r\n")
"""


def test_literal_prefix_and_custom_prefix(muxd_server, outer, tmp_path):
    s = muxd_server
    script = tmp_path / "raw_echo.py"
    script.write_text(RAW_ECHO)
    s.cli("new-session", "-d", "-s", "work", "--", sys.executable, str(script), check=True)
    term = outer()
    term.type(muxd_command(s.name, "attach", "-t", "work"), enter=True)
    term.wait_for("ready")
    term.keys("C-b", "C-b")  # prefix twice: a literal C-b
    s.wait_for_text("work", "'\\x02'")
    term.keys("C-b", "d")
    term.wait_for("[detached")
    term.type(f"MUXD_PREFIX=C-a {muxd_command(s.name, 'attach', '-t', 'work')}", enter=True)
    term.wait_for("ready")
    term.keys("C-b")  # not the prefix now: goes through
    wait_until(lambda: s.capture("work").count("\\x02") == 2, timeout=5, message="C-b passed through")
    term.keys("C-a", "C-a")
    s.wait_for_text("work", "'\\x01'")
    term.send_hex(b"\x1b[200~plain\x1b[201~")  # the program did not ask for bracketed paste
    s.wait_for_text("work", "b'plain'")
    term.keys("C-a", "d")
    term.wait_for("[detached")
    term.type(muxd_command(s.name, "attach", "-t", "work", "--prefix", "Bogus-key"), enter=True)
    term.wait_for("invalid prefix key")


def test_two_clients_share_the_session_and_the_smallest_size_wins(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    big, small = outer(100, 30), outer(80, 20)
    attach(big, s)
    wait_until(lambda: (panes(s)[0]["width"], panes(s)[0]["height"]) == (100, 29), timeout=5,
               message="pane sized to the one client")
    attach(small, s)
    wait_until(lambda: (panes(s)[0]["width"], panes(s)[0]["height"]) == (80, 19), timeout=5,
               message="pane sized to the smallest client")
    small.type("echo from-small", enter=True)
    big.wait_for(re.compile(r"^from-small\b", re.M).search)
    big.type("echo from-big", enter=True)
    small.wait_for(re.compile(r"^from-big\b", re.M).search)
    screen = big.wait_for("[work]")
    assert status_line(screen, 30).startswith("[work]")  # the big client keeps its own bottom row
    rows = screen.split("\n")
    assert all(len(r.rstrip()) <= 100 for r in rows)
    assert all(r[80:].strip() in ("", "·" * 20) for r in rows[:19])  # right of the window: unused
    assert rows[19].strip(" ·─") == "" or set(rows[19].strip()) <= set("·─ ")  # outside the window
    small.keys("C-b", "d")
    small.wait_for("[detached")
    wait_until(lambda: (panes(s)[0]["width"], panes(s)[0]["height"]) == (100, 29), timeout=5,
               message="pane back to the remaining client's size")


def _sgr(button: int, column: int, row: int, release: bool = False) -> bytes:
    """An SGR mouse report for 0-based (column, row) of the outer terminal."""
    return f"\x1b[<{button};{column + 1};{row + 1}{'m' if release else 'M'}".encode()


def _shows_selected(term: OuterTerminal, text: str) -> None:
    """`text` shows in tmux's mode style (black on yellow): selected. Selected text starting a
    row right below the copy-mode position indicator (the same style) needs no new SGR."""
    selected = re.compile(r"(?:\x1b\[30m\x1b\[43m|\x1b\[30;43m)(?:\[\d+/\d+\]\n)?" + re.escape(text))
    term.wait_for(selected.search, escapes=True)


def _copied_then_pasted(term: OuterTerminal, text: str) -> None:
    """`text` reached the outer terminal's clipboard (OSC 52; the outer tmux has set-clipboard
    on) and `C-b ]` pastes it into the shell."""
    wait_until(lambda: term.tmux("show-buffer", check=False) == text, timeout=5,
               message="the selection offered to the terminal's clipboard (OSC 52)")
    term.type("echo pasted:")
    term.keys("C-b", "]")
    term.keys("Enter")
    term.wait_for(f"\npasted:{text}\n")


def test_mouse_drag_selects_copies_to_the_clipboard_and_pastes(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    term.tmux("set", "-g", "set-clipboard", "on")  # the outer tmux keeps what OSC 52 offers it
    attach(term, s)
    term.type("echo first-$((6*7)) second-$((7*8))", enter=True)
    screen = term.wait_for("first-42 second-56\n")
    row = screen.split("\n").index("first-42 second-56")
    # Press on "first", drag onto the next row, back, and along to the end of "second-56".
    term.send_hex(_sgr(0, 0, row))
    term.send_hex(_sgr(32, 5, row + 1))
    term.send_hex(_sgr(32, 12, row))
    # While dragging, the selection shows in tmux's mode style (black on yellow).
    _shows_selected(term, "first-42 seco")
    term.send_hex(_sgr(32, 17, row))
    term.send_hex(_sgr(0, 17, row, release=True))
    # The drag's copy mode ended with the copy: keys reach the shell, C-b ] pastes the text.
    _copied_then_pasted(term, "first-42 second-56")
    # A click without a drag selects nothing and leaves no copy mode behind.
    term.send_hex(_sgr(0, 3, row))
    term.send_hex(_sgr(0, 3, row, release=True))
    term.type("echo still-$((1+2))", enter=True)
    term.wait_for("still-3")


def test_copy_mode_keys_search_select_and_copy(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    term.tmux("set", "-g", "set-clipboard", "on")
    attach(term, s)
    term.type("echo kb-$((6*7)) tail", enter=True)
    term.wait_for("\nkb-42 tail\n")
    # The copy cursor starts on the prompt below the output: up, line start, select to the end
    # of the third word ("kb", "-", "42").
    term.keys("C-b", "[")
    term.keys("k", "0", "Space", "e", "e", "e")
    _shows_selected(term, "kb-42")
    term.keys("Enter")  # copies and leaves copy mode
    _copied_then_pasted(term, "kb-42")
    # A search up into the history; $((...)) keeps the typed command line from matching.
    term.type("echo Needle-$((40+2)) here; seq 1 60", enter=True)
    term.wait_for("\n60\n")
    term.keys("C-b", "[", "?")
    term.wait_for("(search up)")
    term.type("needle-42")  # lower case: matches any case
    term.keys("Enter")
    term.wait_for(re.compile(r"\[\d+/\d+\]").search)  # scrolled back to it
    term.keys("Space", "e", "e", "e")
    _shows_selected(term, "Needle-42")
    term.keys("Enter")
    _copied_then_pasted(term, "Needle-42")


def test_copy_mode_with_wheel_and_keys(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    # $((2*100)): the echoed command line has no "200", so only seq's output can end a row with it.
    s.cli("send-keys", "-t", "work", "seq 1 $((2*100))", "Enter", check=True)
    s.wait_for_text("work", "200\n")
    term = outer()
    attach(term, s)
    term.wait_for("200\n")
    wheel_up = b"\x1b[<64;10;10M"
    term.send_hex(wheel_up)
    screen = term.wait_for(re.compile(r"\[3/\d+\]").search)
    assert "200" not in screen.split("\n")[27]
    for _ in range(3):
        term.send_hex(wheel_up)
    term.wait_for(re.compile(r"\[12/\d+\]").search)
    term.keys("g")
    screen = term.wait_for(lambda sc: re.search(r"^1\s*$", sc, re.M))
    term.keys("G")
    term.wait_for(lambda sc: "200\n" in sc and not re.search(r"\[[1-9]\d*/\d+\]", sc))
    term.keys("q")
    term.type("echo typed-$((2*3))", enter=True)  # out of copy mode: keys reach the shell again
    term.wait_for("typed-6")
    term.keys("C-b", "[")
    term.keys("C-y", "C-y")  # scroll two lines (arrows move the copy cursor)
    term.wait_for(re.compile(r"\[2/\d+\]").search)
    term.keys("Escape")
    term.wait_for(lambda sc: not re.search(r"\[\d+/\d+\]", sc))
    term.send_hex(wheel_up)
    term.wait_for(re.compile(r"\[3/\d+\]").search)
    wheel_down = b"\x1b[<65;10;10M"
    term.send_hex(wheel_down)
    term.wait_for(lambda sc: not re.search(r"\[\d+/\d+\]", sc))  # down past the bottom leaves


MOUSE_ECHO = r"""
import os, sys, tty
tty.setraw(0)
os.write(1, b"\x1b[?1000h\x1b[?1006h\x1b[?2004hready\r\n")
while True:
    data = os.read(0, 1024)
    os.write(1, repr(data).encode() + b"\r\n")
"""


def test_mouse_and_paste_forwarding_to_programs_that_ask(muxd_server, outer, tmp_path):
    s = muxd_server
    script = tmp_path / "echo_input.py"
    script.write_text(MOUSE_ECHO)
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    s.cli("split-window", "-h", "-t", "work", "--", sys.executable, str(script), check=True)
    s.wait_for_text("%1", "ready")
    term = outer()
    attach(term, s)
    # Click at client cell (60, 5) -> pane %1 starts at x=51: pane cell (9, 5), 1-based 10;6.
    term.send_hex(b"\x1b[<0;61;6M")
    s.wait_for_text("%1", "\\x1b[<0;10;6M")
    term.send_hex(b"\x1b[200~pasted\x1b[201~")
    s.wait_for_text("%1", "\\x1b[200~pasted\\x1b[201~")
    term.send_hex(b"\x1b[<64;70;3M")  # the wheel goes to the program too, not to copy mode
    s.wait_for_text("%1", "\\x1b[<64;19;3M")
    assert not re.search(r"\[\d+/\d+\]", term.screen())


def test_not_a_terminal_is_a_clear_error(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    result = s.cli("attach", "-t", "work", input="")
    assert result.returncode == 1 and "not a terminal" in result.stderr
    result = s.cli("new", "-s", "other", "--", "sleep", "60", input="")
    assert result.returncode == 1 and "not a terminal" in result.stderr
    assert [p["session"] for p in panes(s)] == ["work"]  # nothing was created
    assert s.cli("attach", "-t", "nosuch").returncode == 1


def test_attach_presents_the_clis_token(muxd_server, outer, tmp_path):
    """An attached terminal types keys and runs prefix commands: it greets with the token every
    other command presents, so a view_only token is refused it (it attached as the socket owner)."""
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    viewer = s.cli("token", "create", "--tier", "view_only", check=True).stdout.strip()
    admin = s.cli("token", "create", "--tier", "admin", check=True).stdout.strip()
    term = outer()
    term.type(f"MUXD_CLI_TOKEN={viewer} " + muxd_command(s.name, "attach", "-t", "work") + "; echo rc=$?",
              enter=True)
    screen = term.wait_for(lambda sc: re.search(r"^rc=\d", sc, re.M))
    assert re.search(r"^rc=1$", screen, re.M), screen
    assert "attach is dangerous: it needs tier admin" in screen.replace("\n", ""), screen
    assert s.cli("list-clients", check=True).stdout.strip() == ""
    term.type(f"echo {viewer} > {tmp_path}/viewer; " + muxd_command(s.name, "--token-file", f"{tmp_path}/viewer",
                                                                     "attach", "-t", "work") + "; echo rc2=$?",
              enter=True)
    assert re.search(r"^rc2=1$", term.wait_for(lambda sc: re.search(r"^rc2=\d", sc, re.M)), re.M)
    term.type(f"MUXD_CLI_TOKEN={admin} " + muxd_command(s.name, "attach", "-t", "work"), enter=True)
    term.wait_for("[work]")
    term.keys("C-b", "d")
    term.wait_for("[detached (from session work)]")


def test_bare_muxd_and_new_without_d_attach(muxd_server, outer):
    s = muxd_server
    term = outer()
    term.type(muxd_command(s.name), enter=True)
    term.wait_for(lambda sc: re.search(r"^\[0\] 0:\S+\*", status_line(sc), re.M))
    (only,) = panes(s)
    assert only["command"] == [default_shell()]  # the user's $SHELL
    term.keys("C-b", "d")
    term.wait_for("[detached (from session 0)]")
    term.type(muxd_command(s.name, "new", "-s", "agent", "--", sys.executable, "-c",
                           "import time; print('fake agent', 6*7); time.sleep(60)"), enter=True)
    term.wait_for("fake agent 42")  # the program's output: the typed command line says 6*7
    term.wait_for("[agent]")
    term.keys("C-b", "d")
    term.wait_for("[detached (from session agent)]")
    assert {p["session"] for p in panes(s)} == {"0", "agent"}


def test_killed_client_resize_extremes_dead_pane_and_killed_session(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    # A client killed with SIGKILL: the daemon does not care.
    victim = outer(command=muxd_command(s.name, "attach", "-t", "work"))
    victim.wait_for("[work]")
    os.kill(victim.pane_pid(), signal.SIGKILL)
    wait_until(victim.pane_dead, timeout=5, message="client gone")
    assert s.cli("list-sessions", check=True).returncode == 0

    term = outer()
    term.type(f"stty -g > {tmp_path}/before; " + muxd_command(s.name, "attach", "-t", "work")
              + f"; stty -g > {tmp_path}/after", enter=True)
    term.wait_for("[work]")
    term.resize(1, 1)
    wait_until(lambda: s.cli("list-sessions").returncode == 0, timeout=5, message="daemon serving")
    term.resize(500, 200)
    wait_until(lambda: panes(s)[0]["width"] == 500 and panes(s)[0]["height"] == 199, timeout=5,
               message="pane follows a 500x200 client")
    term.resize(100, 30)
    term.wait_for(lambda sc: status_line(sc).startswith("[work]"))
    wait_until(lambda: panes(s)[0]["width"] == 100, timeout=5, message="pane back to 100 columns")

    # A pane dying while attached.
    s.cli("split-window", "-t", "work", "--", "sh", "-c", "read x; exit 3", check=True)
    term.wait_for("─")
    s.cli("send-keys", "-t", "%1", "Enter", check=True)
    term.wait_for("status 3")

    # Heavy output, then detach. (`yes` in a pane of its own: bash 5.2's readline, having lived
    # through a 2x1 terminal above, now and then dies of heap corruption when it next forks.)
    s.cli("split-window", "-t", "%0", "--", "yes", check=True)
    term.wait_for("y\n")
    term.keys("C-b", "d")
    term.wait_for("[detached")
    wait_until(lambda: stty_saved(tmp_path / "after"), timeout=5, message="client exit")
    assert (tmp_path / "after").read_text() == (tmp_path / "before").read_text()
    assert s.capture("%2").count("y\n") > 3  # still writing
    s.cli("kill-pane", "-t", "%2", check=True)

    # The session killed from another client: attached clients see [exited], terminal restored.
    (tmp_path / "after").unlink()
    term.type(muxd_command(s.name, "attach", "-t", "work") + f"; stty -g > {tmp_path}/after", enter=True)
    term.wait_for("[work]")
    s.cli("kill-session", "-t", "work", check=True)
    term.wait_for("[exited]")
    wait_until(lambda: stty_saved(tmp_path / "after"), timeout=5, message="client exit")
    assert (tmp_path / "after").read_text() == (tmp_path / "before").read_text()
    assert s.cli("list-sessions", check=True).returncode == 0


WINCH_WATCH = r"""
import os, signal
signal.signal(signal.SIGWINCH, lambda *_: print("winch %dx%d" % tuple(os.get_terminal_size()), flush=True))
print("watching", flush=True)
while True:
    signal.pause()
"""


def test_target_forms_alias_resize_winch_and_closing_the_terminal(muxd_server, outer, tmp_path):
    s = muxd_server
    script = tmp_path / "winch.py"
    script.write_text(WINCH_WATCH)
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)  # %0 in work:0
    s.cli("new-window", "-t", "work", "-n", "watch", "--", sys.executable, str(script), check=True)  # %1
    s.cli("split-window", "-t", "work:watch", *SHELL, check=True)  # %2 below it, the active pane
    s.cli("new-session", "-d", "-s", "other", *SHELL, check=True)  # the most recent session
    s.wait_for_text("%1", "watching")
    info = {p["id"]: p for p in panes(s)}
    term = outer()

    def attached_to(target_args: tuple[str, ...], session: str, window: str) -> None:
        term.type(muxd_command(s.name, *target_args), enter=True)
        term.wait_for(lambda sc: re.search(rf"^\[{session}\] .*{window}\*", status_line(sc), re.M))

    def detach() -> None:
        term.keys("C-b", "d")
        term.wait_for(lambda sc: sc.count("[detached") > detached[0])
        detached[0] += 1

    detached = [0]
    term.type(muxd_command(s.name, "attach", "-t", "work:nosuch"), enter=True)
    term.wait_for("can't find window: nosuch")  # a clear error; nothing attached
    attached_to(("a",), "other", "0:bash")  # `muxd a`: the most recent session
    detach()
    attached_to(("attach", "-t", "work:0"), "work", "0:bash")  # session:window
    detach()
    attached_to(("a", "-t", "work:watch.0"), "work", "1:watch")  # session:name.pane
    assert next(p for p in panes(s) if p["active"] and p["session"] == "work")["id"] == "%1"
    detach()
    attached_to(("attach", "-t", "%0"), "work", "0:bash")  # a pane id
    detach()
    attached_to(("attach", "-t", info["%2"]["window_id"]), "work", "1:watch")  # a window id
    assert next(p for p in panes(s) if p["active"] and p["session"] == "work")["id"] == "%1"
    detach()
    attached_to(("attach", "-t", info["%0"]["session_id"]), "work", "1:watch")  # $N: as it was left
    # Resizing the outer terminal re-lays out the panes; the program gets SIGWINCH and its size.
    term.resize(90, 25)
    s.wait_for_text("%1", "winch 90x")
    wait_until(lambda: {p["id"]: (p["width"], p["height"]) for p in panes(s)}["%1"][0] == 90, timeout=5,
               message="pane re-laid out")
    top, bottom = (next(p for p in panes(s) if p["id"] == i) for i in ("%1", "%2"))
    assert top["height"] + bottom["height"] + 1 == 24
    s.wait_for_text("%1", f"winch 90x{top['height']}")
    term.wait_for(lambda sc: status_line(sc, 25).startswith("[work]"))

    # A second, smaller client whose terminal closes: it detaches, the size goes back.
    small = outer(70, 20, command=muxd_command(s.name, "attach", "-t", "work"))
    small.wait_for("[work]")
    s.wait_for_text("%1", "winch 70x")
    small.tmux("kill-pane", "-t", "outer")  # the outer pane closes: SIGHUP to the client
    wait_until(lambda: next(p for p in panes(s) if p["id"] == "%1")["width"] == 90, timeout=5,
               message="size back to the remaining client once the closed one left")
    assert all(p["status"] == "running" for p in panes(s))
    term.type("still-here")
    term.wait_for("still-here")  # typed into the watcher's pane: its terminal echoes the keys


def test_a_client_that_stops_reading_slows_nobody(muxd_server, outer):
    """A terminal that falls behind (here: never reads) gets no more frames; the others do."""
    import socket

    from muxd.config import PROTOCOL_VERSION
    from muxd.protocol.codec import encode
    from muxd.protocol.messages import Attach, Hello

    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        stalled.connect(str(s.socket_path))
        stalled.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="stalled"))
                        + encode(Attach(id=2, target="work", columns=90, lines=25)))
        wait_until(lambda: panes(s)[0]["width"] == 90, timeout=5, message="the stalled client attached")
        term = outer()
        attach(term, s)
        s.cli("split-window", "-t", "work", "--", "sh", "-c", "while :; do seq 1 5000; done", check=True)
        term.wait_for(lambda sc: re.search(r"^\d{3,4} ", sc, re.M))  # the flood shows
        term.keys("C-b", "Up")  # back to the shell, above the flood
        wait_until(lambda: next(p for p in panes(s) if p["active"])["id"] == "%0", timeout=5,
                   message="shell pane active")
        for n in range(3):  # the stalled client's frames pile up nowhere: every echo comes back
            term.type(f"echo alive-$((40+{n}))", enter=True)
            term.wait_for(re.compile(rf"^alive-{40 + n} ", re.M).search, timeout=5)
        assert s.cli("list-sessions", check=True).returncode == 0
    finally:
        stalled.close()
    wait_until(lambda: panes(s)[0]["width"] == 100, timeout=5, message="size back once it left")


TUI_60HZ = r"""
import sys, time
sys.stdout.write("\x1b[?1049h")
frame = 0
while True:
    sys.stdout.write("\x1b[H" + "\r\n".join(f"row {y} frame {frame}" for y in range(20)))
    sys.stdout.flush()
    frame += 1
    time.sleep(1 / 60)
"""


def test_a_program_redrawing_on_its_own_gets_at_most_30_frames_a_second(muxd_server, tmp_path):
    """Output alone is painted at ATTACH_OUTPUT_FRAME_INTERVAL_S (typing gets 60 Hz): half
    the render cost of a 60 Hz TUI, and the screen still moves."""
    import socket
    import time

    from muxd.config import ATTACH_OUTPUT_FRAME_INTERVAL_S, PROTOCOL_VERSION
    from muxd.protocol.codec import decode_server_message, encode
    from muxd.protocol.framing import FrameDecoder
    from muxd.protocol.messages import Attach, AttachOutput, Hello

    s = muxd_server
    script = tmp_path / "tui.py"
    script.write_text(TUI_60HZ)
    s.cli("new-session", "-d", "-s", "work", "--", sys.executable, str(script), check=True)
    s.wait_for_text("work", "frame")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as link:
        link.connect(str(s.socket_path))
        link.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="counter"))
                     + encode(Attach(id=2, target="work", columns=80, lines=24)))
        decoder, frames, seconds = FrameDecoder(), 0, 2.0
        link.settimeout(0.2)
        start = time.monotonic()
        while time.monotonic() - start < seconds:  # counting over a fixed interval, not waiting
            try:
                data = link.recv(65536)
            except TimeoutError:
                continue
            assert data, "the daemon closed the connection"
            frames += sum(isinstance(decode_server_message(b), AttachOutput) for b in decoder.feed(data))
    limit = seconds / ATTACH_OUTPUT_FRAME_INTERVAL_S
    assert 5 * seconds <= frames <= limit + 3, (frames, limit)


def test_random_mouse_and_copy_keys_never_break_a_client(muxd_server):
    """Thousands of random mouse reports (presses, drags, releases, wheels, off-screen) mixed
    with copy-mode and paste keys, over the protocol: the client stays attached, the daemon
    keeps serving, and the panes still take input."""
    import random
    import socket

    from muxd.config import PROTOCOL_VERSION
    from muxd.protocol.codec import decode_server_message, encode
    from muxd.protocol.framing import FrameDecoder
    from muxd.protocol.messages import Attach, AttachInput, AttachOutput, Detached, Hello

    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    s.cli("send-keys", "-t", "work", "seq 1 300", "Enter", check=True)
    s.cli("split-window", "-h", "-t", "work", *SHELL, check=True)
    rng = random.Random(7)
    keys = [b"\x02]", b"\x02[", b"q", b"\x1b", b"\x1b[A", b"g", b"G"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as link:
        link.connect(str(s.socket_path))
        link.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="fuzz"))
                     + encode(Attach(id=2, target="work", columns=100, lines=30)))
        for _ in range(3000):
            if rng.random() < 0.1:
                data = rng.choice(keys)
            else:
                button = rng.choice((0, 1, 2, 32, 33, 35, 64, 65)) | rng.choice((0, 0, 4, 8, 16))
                data = (f"\x1b[<{button};{rng.randint(0, 130)};{rng.randint(0, 40)}"
                        f"{rng.choice('Mm')}").encode()
            link.sendall(encode(AttachInput(data=data)))
        assert s.cli("list-sessions", check=True).returncode == 0
        # Leave copy mode, then detach: the detach answers once every report before it was handled.
        link.sendall(encode(AttachInput(data=b"q")) + encode(AttachInput(data=b"\x02d")))
        link.settimeout(stretched(10))
        decoder, detached, copies = FrameDecoder(), [], 0
        while not detached and (chunk := link.recv(1 << 20)):
            messages = list(map(decode_server_message, decoder.feed(chunk)))
            detached = [m for m in messages if isinstance(m, Detached)]
            copies += sum(m.data.count(b"\x1b]52;") for m in messages if isinstance(m, AttachOutput))
        assert [m.reason for m in detached] == ["detached (from session work)"]  # not an error
        assert copies >= 5, copies  # the drags did select and copy (16 with this seed)
    assert all(p["status"] == "running" for p in panes(s))  # the shells took the garbage typed
    s.cli("new-window", "-t", "work", *SHELL, check=True)  # and a fresh pane takes keys as ever
    s.cli("send-keys", "-t", "%2", "echo ok-$((40+2))", "Enter", check=True)
    s.wait_for_text("%2", "ok-42\n")
    assert "Traceback" not in s.log_path.read_text()  # nothing failed quietly either


def test_kill_server_tells_an_attached_client_the_server_exited(muxd_server, outer):
    muxd_server.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    attach(term, muxd_server)
    muxd_server.cli("kill-server", check=True)
    term.wait_for("[server exited]")  # as tmux says; a dropped connection reads [lost server]
    wait_until(lambda: not muxd_server.running(), timeout=10, message="daemon exit")
