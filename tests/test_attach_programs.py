"""Real programs used through `muxd attach` in a real outer terminal (a pane of a private tmux).

vim (alternate screen, insert mode, :wq), less (page, search, q), top (refreshing header),
the fake Claude Code and — when installed — the real one against a fake model server, with the
status line showing the active pane's agent state; wide characters and 256/true colour compared
cell for cell with the same program run straight in another outer pane.
"""

from __future__ import annotations

import re
import sys

import pytest

from muxd.testing.outer_terminal import OuterTerminal, outer_terminals
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

from test_attach import SHELL, attach, status_line

ROWS = 30


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def _shell_with_marker(s, term: OuterTerminal, marker: str) -> None:
    term.type(f"echo {marker}-$((6*7))", enter=True)
    term.wait_for(f"{marker}-42")


def test_vim_alternate_screen_insert_and_write(muxd_server, outer, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    attach(term, s)
    _shell_with_marker(s, term, "before-vim")
    target = tmp_path / "notes.txt"
    term.type(f"vim -u NONE -N -n {target}", enter=True)
    # The alternate screen: the shell's lines are gone, vim's tildes and file name are there
    # (vim draws its last line after the tildes: a loaded machine can show a frame between).
    screen = term.wait_for(lambda sc: "before-vim-42" not in sc and sc.count("\n~") > 10
                           and "notes.txt" in (sc.split("\n") + [""] * ROWS)[ROWS - 2])  # above muxd's status line
    assert status_line(screen).startswith("[work]")
    term.keys("i")
    term.type("hello from vim 漢字")
    term.keys("Escape")
    term.wait_for(lambda sc: sc.split("\n")[0].startswith("hello from vim 漢字"))
    term.type(":wq")
    term.keys("Enter")
    screen = term.wait_for("before-vim-42")  # the shell's screen is back intact
    assert "~\n~" not in screen
    assert target.read_text() == "hello from vim 漢字\n"
    _shell_with_marker(s, term, "after-vim")


def test_less_pages_searches_and_quits(muxd_server, outer, tmp_path):
    s = muxd_server
    long_file = tmp_path / "long.txt"
    long_file.write_text("".join(f"line {n}\n" for n in range(1, 501)))
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    attach(term, s)
    _shell_with_marker(s, term, "before-less")
    term.type(f"LESS= less {long_file}", enter=True)
    term.wait_for(lambda sc: sc.split("\n")[0].rstrip() == "line 1")
    term.keys("Space")  # a page of 28 rows (29-row pane, less's prompt on the last)
    # The page's end, not its first change: less's rows may come in more than one read, and a
    # frame drawn between them shows the screen part-scrolled (line 11 at the top, once in CI).
    term.wait_for(lambda sc: re.fullmatch(r"line (29|28)", sc.split("\n")[0].rstrip()))
    term.type("/line 250")
    term.keys("Enter")
    screen = term.wait_for(lambda sc: re.search(r"^line 250\s*$", sc, re.M))
    assert "line 1\n" not in screen
    term.keys("q")
    term.wait_for("before-less-42")
    _shell_with_marker(s, term, "after-less")


def test_top_header_refreshes_and_q_exits(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    term = outer()
    attach(term, s)
    _shell_with_marker(s, term, "before-top")
    term.type("top -d 0.3", enter=True)
    screen = term.wait_for(lambda sc: "load average" in sc and re.search(r"PID\s+USER", sc))
    first_header = screen.split("\n")[0]
    assert first_header.startswith("top - ")
    # The header's clock/uptime/load change: the outer terminal keeps being repainted.
    term.wait_for(lambda sc: sc.split("\n")[0] != first_header, timeout=5)
    assert status_line(term.screen()).startswith("[work]")
    term.keys("q")  # top leaves its last screen on the main screen, as it does under tmux
    # Type only once top has gone: keys reaching it first would be its commands, not the shell's.
    wait_until(lambda: s.cli("display", "-p", "-t", "work", "#{pane_current_command}").stdout.strip() == "bash",
               timeout=10, message="top exited")
    _shell_with_marker(s, term, "after-top")
    assert "PID" in term.screen()


def test_fake_claude_prompt_answer_and_agent_state_in_the_status_line(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "agent", "--", sys.executable, "-m", "muxd.testing.fake_agent",
          "claude", check=True)
    term = outer()
    attach(term, s, session="agent")
    term.wait_for("Claude Code v2.1.330")
    term.wait_for(lambda sc: "claude · Idle" in status_line(sc))
    term.type("tell me something")  # this fake reads a line without echoing it
    term.keys("Enter")
    screen = term.wait_for(lambda sc: re.search(r"claude · Thinking \d+s", status_line(sc)))
    assert "Gusting…" in screen
    screen = term.wait_for("Here is my answer.")
    term.wait_for(lambda sc: "claude · Idle" in status_line(sc))
    assert status_line(screen).startswith("[agent]")


def test_real_claude_code_through_attach(muxd_server, outer, tmp_path):
    from muxd.testing.fake_models import AnthropicFake, Say, launch
    from muxd.testing.fake_models.agent_pane import end_processes_with_home

    bin_dir, why = launch.find_cli("claude")
    if bin_dir is None:
        print(f"skipped: {why}")
        pytest.skip(why)
    s = muxd_server
    answer = "The fake model says hello through muxd attach."
    fake = AnthropicFake([[Say(answer, 0.02)]])
    with fake:
        agent = launch.claude(tmp_path, fake.url, bin_dir, "--permission-mode", "default")
        s.cli(*agent.new_session_args("agent", 120, 39), check=True)
        try:
            term = outer(120, 40)
            attach(term, s, session="agent")
            screen = term.wait_for(lambda sc: "❯" in sc and "─" * 40 in sc, timeout=30)  # the prompt box
            term.wait_for(lambda sc: "claude · Idle" in status_line(sc, 40), timeout=20)
            term.type("say hello")
            term.wait_for("say hello")
            term.keys("Enter")
            screen = term.wait_for("through muxd attach", timeout=30)
            assert "The fake model says hello" in screen.replace("\n", " ")
            term.wait_for(lambda sc: "claude · Idle" in status_line(sc, 40), timeout=20)
        finally:
            s.cli("kill-session", "-t", "agent")
            end_processes_with_home(agent.home)


WIDE_AND_COLOUR = (
    r"printf 'W:漢字テスト│x😀y\n"
    r"C:\033[38;5;196m256red\033[0m \033[48;5;27mbg256\033[0m "
    r"\033[38;2;10;200;30mtruefg\033[0m \033[48;2;250;20;90mtruebg\033[0m \033[1;4mbold\033[0m\n'"
)


def _marked_rows(screen: str) -> dict[str, str]:
    rows = {}
    for row in screen.split("\n"):
        plain = re.sub(r"\x1b\[[0-9;:]*m", "", row)
        if plain[:2] in ("W:", "C:"):
            # Attribute resets after the last character only say whether the blank cells that
            # follow were written or erased: nothing a person sees.
            rows[plain[:2]] = re.sub(r"(?:\x1b\[[0-9;:]*m)+$", "", row.rstrip())
    return rows


def test_wide_characters_and_colours_reach_the_terminal_as_under_tmux(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "work", *SHELL, check=True)
    through_muxd, direct = outer(), outer()
    attach(through_muxd, s)
    for term in (through_muxd, direct):
        term.type("clear; " + WIDE_AND_COLOUR, enter=True)
        term.wait_for("C:256red")  # printf's output; the echoed command line has escapes there
    muxd_rows = _marked_rows(through_muxd.screen(escapes=True))
    tmux_rows = _marked_rows(direct.screen(escapes=True))
    assert set(muxd_rows) == {"W:", "C:"}, muxd_rows
    assert "38;5;196" in muxd_rows["C:"] and "48;2;250;20;90" in muxd_rows["C:"]
    assert muxd_rows == tmux_rows  # the outer terminal holds the same cells either way
    # The wide characters take two cells each: the border-free row ends at the same column.
    plain = through_muxd.screen().split("\n")
    wide_row = next(r for r in plain if r.startswith("W:"))
    assert wide_row.rstrip() == "W:漢字テスト│x😀y"


@pytest.mark.parametrize("backend", ["ghostty", "pyte"])
def test_a_combining_mark_typed_after_its_letter_is_drawn_at_once(backend):
    """`e`, then U+0301 as a keystroke of its own: the pane's emulator joins the mark to the `e`
    already on screen without writing a new cell, and the attached client must redraw that row
    at once, as tmux does (not at the next full repaint)."""
    s = MuxdTestServer(env={"MUXD_EMULATOR": backend}).start()
    try:
        status = s.cli("server", "status", check=True).stdout
        assert any(line.split() == ["emulator", backend] for line in status.splitlines())
        s.cli("new-session", "-d", "-s", "work", "--", "cat", check=True)
        with outer_terminals(s) as make:
            term = make()
            attach(term, s)
            term.type("xe")
            term.wait_for(lambda sc: sc.split("\n")[0].rstrip() == "xe")  # cat's tty echoes it
            term.type("\u0301")
            wait_until(lambda: s.capture("work").split("\n")[0] == "xe\u0301", timeout=10,
                       message="the pane holding e + U+0301")
            term.wait_for(lambda sc: sc.split("\n")[0].rstrip() == "xe\u0301")
    finally:
        s.stop()
