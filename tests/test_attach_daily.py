"""tmux's daily commands seen by attached clients in a real outer terminal (a pane of a private
tmux server): `C-b $`, detach-client and list-clients, paste-buffer, the status and prefix
options, and panes made interactively closing when their program exits unless remain-on-exit."""

from __future__ import annotations

import json
import re

import pytest

from muxd.testing.outer_terminal import OuterTerminal, muxd_command, outer_terminals, status_line
from muxd.testing.outer_terminal import attach_in as attach
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def panes(server, target: str | None = None):
    where = ["-t", target] if target else ["-a"]
    return json.loads(server.run_here("list-panes", *where, "--json", check=True).stdout)


def test_prefix_dollar_renames_the_session_and_options_reach_attached_clients(muxd_server, outer):
    s = muxd_server
    s.run_here("new-session", "-d", "-s", "work", *SHELL, check=True)
    # New windows run a shell without the user's rc files (quick; none left half done at the end).
    s.run_here("set-option", "-g", "default-command", "exec bash --norc --noprofile", check=True)
    term = outer()
    attach(term, s, "work")
    term.keys("C-b", "$")
    term.wait_for("(rename-session) work")
    term.keys("C-u")
    term.type("renamed")
    term.keys("Enter")
    term.wait_for(lambda sc: status_line(sc).startswith("[renamed]"))
    assert s.run_here("has-session", "-t", "renamed").returncode == 0
    # set-option while attached: the status line goes, the prefix changes, at once.
    s.run_here("set-option", "-t", "renamed", "status", "off", check=True)
    term.wait_for(lambda sc: "[renamed]" not in sc)
    s.run_here("set-option", "-g", "prefix", "C-a", check=True)
    term.keys("C-a", "c")
    wait_until(lambda: len(panes(s, "renamed")) == 2, timeout=10, message="C-a c made a window")
    s.run_here("select-window", "-t", "renamed:0", check=True)  # select-window shows in the client
    s.run_here("set-option", "-t", "renamed", "status", "on", check=True)
    term.wait_for(lambda sc: "0:bash*" in status_line(sc))


def test_detach_client_by_name_by_session_all_others_and_from_inside(muxd_server, outer):
    s = muxd_server
    s.run_here("new-session", "-d", "-s", "one", *SHELL, check=True)
    s.run_here("new-session", "-d", "-s", "two", *SHELL, check=True)
    a, b, c = outer(), outer(), outer()
    attach(a, s, "one")
    attach(b, s, "one")
    attach(c, s, "two")
    tty = {t: t.tmux("display-message", "-p", "-t", "outer", "#{pane_tty}").strip() for t in (a, b, c)}
    listed = s.run_here("list-clients", check=True).stdout.splitlines()
    assert sorted(listed) == sorted([f"{tty[a]}: one [100x30]", f"{tty[b]}: one [100x30]", f"{tty[c]}: two [100x30]"])
    assert s.run_here("list-clients", "-t", "two", check=True).stdout == f"{tty[c]}: two [100x30]\n"

    s.run_here("detach-client", "-t", tty[a], check=True)
    a.wait_for("[detached (from session one)]")
    assert "[detached" not in b.screen()
    attach(a, s, "one")
    s.run_here("detach-client", "-a", "-t", tty[c], check=True)  # every client but c
    a.wait_for(lambda sc: sc.count("[detached (from session one)]") == 2)
    b.wait_for("[detached (from session one)]")
    assert "[detached" not in c.screen()
    # Typed in a pane: the current client is the one showing that pane's session.
    c.type(muxd_command(s.name, "detach-client"), enter=True)
    c.wait_for("[detached (from session two)]")
    attach(c, s, "two")
    s.run_here("detach-client", "-s", "two", check=True)
    c.wait_for(lambda sc: sc.count("[detached (from session two)]") == 2)
    assert s.run_here("list-clients", check=True).stdout == ""
    out = s.run_here("detach-client", "-t", "/dev/pts/nope")
    assert out.returncode == 1 and out.stderr == "muxd: can't find client: /dev/pts/nope\n"


def test_paste_buffer_into_an_attached_pane_and_prefix_bracket_pastes_set_buffer(muxd_server, outer):
    s = muxd_server
    s.run_here("new-session", "-d", "-s", "paste", *SHELL, check=True)
    term = outer()
    attach(term, s, "paste")
    s.run_here("set-buffer", "-b", "cmd", "echo pasted-$((6*7))\n", check=True)
    s.run_here("paste-buffer", "-t", "paste", "-b", "cmd", check=True)
    term.wait_for("pasted-42")
    s.run_here("set-buffer", "echo bracket-$((6*7))", check=True)  # the newest: C-b ] takes it
    term.keys("C-b", "]")
    term.wait_for("echo bracket-$((6*7))")  # bracketed (bash asked): typed in, not run
    term.keys("Enter")
    term.wait_for("bracket-42")


def split(term: OuterTerminal, s) -> None:
    """C-b % in session life, once the new pane's shell shows its prompt (keys typed before
    would meet a shell not reading yet)."""
    term.keys("C-b", "%")
    wait_until(lambda: len(panes(s, "life")) == 2, timeout=10, message="split")
    new = panes(s, "life")[1]["id"]
    wait_until(lambda: s.run_here("capture-pane", "-p", "-t", new).stdout.strip(), timeout=10,
               message="the split's prompt")


def test_interactive_panes_close_on_exit_unless_remain_on_exit(muxd_server, outer):
    s = muxd_server
    s.run_here("new-session", "-d", "-s", "kept", "--", "sh", "-c", "exit 4", check=True)
    # Splits run a shell without the user's rc files (quick; none left half done at the end).
    s.run_here("set-option", "-g", "default-command", "exec bash --norc --noprofile", check=True)
    term = outer()
    term.type(muxd_command(s.name, "new", "-s", "life", *SHELL), enter=True)
    term.wait_for("[life]")
    split(term, s)
    term.type("exit", enter=True)  # in the split: it closes, as in tmux
    wait_until(lambda: len(panes(s, "life")) == 1, timeout=10, message="the split closed")
    s.run_here("set-option", "-g", "remain-on-exit", "failed", check=True)  # kept only if it failed
    split(term, s)
    term.type("exit 0", enter=True)
    wait_until(lambda: len(panes(s, "life")) == 1, timeout=10, message="a split that succeeded closes")
    split(term, s)
    term.type("exit 3", enter=True)
    wait_until(lambda: len(panes(s, "life")) == 2 and panes(s, "life")[1]["status"] == "exited", timeout=10,
               message="the failed split stays")
    term.wait_for("Pane is dead (status 3)")
    assert [(p["status"], p["exit_code"]) for p in panes(s, "life")] == [("running", None), ("exited", 3)]
    s.run_here("kill-pane", "-t", "life:0.1", check=True)
    s.run_here("set-option", "-gu", "remain-on-exit", check=True)
    term.type("exit", enter=True)  # the session's last pane, made by `muxd new`: the session ends
    term.wait_for("[exited]")
    # A pane made detached keeps its exit status and last screen (orchestrators read them).
    assert [(p["session"], p["status"], p["exit_code"]) for p in panes(s)] == [("kept", "exited", 4)]


def test_mouse_option_off_leaves_the_mouse_to_the_terminal_unless_a_program_asks(muxd_server, outer):
    s = muxd_server
    s.run_here("new-session", "-d", "-s", "mice", *SHELL, check=True)
    term = outer()
    attach(term, s, "mice")

    def reporting() -> tuple[str, str]:  # the outer pane's mouse modes, as tmux sees them set
        flags = term.tmux("display-message", "-p", "-t", "outer", "#{mouse_standard_flag}#{mouse_button_flag}")
        return flags[0], flags[1]

    wait_until(lambda: reporting() == ("0", "1"), timeout=10, message="muxd takes the mouse (1002)")
    s.run_here("set-option", "-g", "mouse", "off", check=True)
    wait_until(lambda: reporting() == ("0", "0"), timeout=10, message="mouse off: no reports")
    s.run_here("send-keys", "-t", "mice", "printf '\\033[?1000h'", "Enter", check=True)  # a program asks
    wait_until(lambda: reporting() == ("1", "0"), timeout=10, message="the pane's own mode (1000)")
    s.run_here("set-option", "-g", "mouse", "on", check=True)
    wait_until(lambda: reporting() == ("0", "1"), timeout=10, message="mouse on again")
    term.keys("C-b", "d")
    term.wait_for("[detached (from session mice)]")
    assert reporting() == ("0", "0")  # nothing left on in the terminal


def test_switch_client_shows_another_session_window_and_pane(muxd_server, outer):
    s = muxd_server
    refused = s.run_here("switch-client", "-t", "nowhere")
    assert refused.returncode == 1 and refused.stderr.strip() == "muxd: no current client"
    s.run_here("new-session", "-d", "-s", "one", *SHELL, check=True)
    s.run_here("new-session", "-d", "-s", "two", *SHELL, check=True)
    s.run_here("new-window", "-d", "-t", "two", "-n", "second", *SHELL, check=True)
    term = outer()
    attach(term, s, "one")
    s.run_here("switch-client", "-t", "two:1", check=True)
    term.wait_for(lambda sc: status_line(sc).startswith("[two]") and "1:second*" in status_line(sc))
    missing = s.run_here("switch-client", "-t", "three")
    assert missing.returncode == 1 and "can't find session: three" in missing.stderr


def test_copy_mode_shows_its_position_at_once_and_pages_by_halves_and_wholes(muxd_server, outer):
    s = muxd_server
    s.run_here("new-session", "-d", "-s", "work", *SHELL, check=True)
    # $((2*100)): the echoed command line has no "200", so only seq's output can end a row with it.
    s.run_here("send-keys", "-t", "work", "seq 1 $((2*100))", "Enter", check=True)
    s.wait_for_text("work", "200\n")
    term = outer()  # 30 rows: a 29-row pane, so half a page is 14 rows and a page 28
    attach(term, s, "work")
    live = term.wait_for("200\n")
    top = int(live.split("\n")[0].split()[0])  # the number on the pane's first row
    position = re.compile(r"\[(\d+)/(\d+)\]")

    def shows(offset: int):
        """The indicator reads [offset/...] and the view's first row is `offset` rows back."""
        def met(screen: str) -> bool:
            first = screen.split("\n")[0]
            found = position.search(first)
            return found is not None and int(found[1]) == offset and first.split()[0] == str(top - offset)
        return met

    term.keys("C-b", "[")
    term.wait_for(shows(0))  # at once, as tmux, before any scrolling
    term.keys("C-u")
    term.wait_for(shows(14))
    term.keys("C-u")
    term.wait_for(shows(28))
    term.keys("C-d")
    term.wait_for(shows(14))
    term.keys("C-b", "C-b")  # the prefix is C-b: pressed twice it reaches copy mode (tmux's send-prefix)
    term.wait_for(shows(42))
    term.keys("C-f")
    term.wait_for(shows(14))
    term.keys("C-d")
    term.wait_for(shows(0))
    term.keys("q")
    term.wait_for(lambda sc: not position.search(sc))
    # With another prefix, C-b alone pages up.
    s.run_here("set-option", "-g", "prefix", "C-a", check=True)
    term.keys("C-a", "[")
    term.wait_for(shows(0))
    term.keys("C-b")
    term.wait_for(shows(28))
    term.keys("q")
    term.type("echo typed-$((2*3))", enter=True)  # out of copy mode: keys reach the shell again
    term.wait_for("typed-6")
