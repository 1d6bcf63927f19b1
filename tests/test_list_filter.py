"""`-f FILTER` without `-F` filters the list commands' tables (`ls`, `ls --sessions`, `list-panes`,
`list-windows`, `list-clients`, their --json), as tmux's -f filters its default lines; through
`muxd tmux` the lines are those real tmux 3.3a prints for the same sessions and filter."""

from __future__ import annotations

import json

import pytest

from muxd.testing.fake_agent_panes import ask, start_fake_agent
from muxd.testing.outer_terminal import attach_in, outer_terminals
from muxd.testing.tmux_oracle import TmuxOracle

WAITING = "#{==:#{agent_state},AwaitingConfirmation}"
BETA = "#{==:#{session_name},beta}"


def table_column(text: str, heading: str) -> list[str]:
    """The cells of one column of a CLI table (cells hold no spaces in these tests)."""
    lines = text.splitlines()
    at = lines[0].split().index(heading)
    return [line.split()[at] for line in lines[1:]]


def test_ls_f_alone_lists_only_the_waiting_agent(muxd_server):
    s = muxd_server
    calm = start_fake_agent(s, "calm")
    asker = start_fake_agent(s, "asker", "codex")
    ask(s, asker)
    shown = s.cli("ls", "-f", WAITING, check=True).stdout
    assert table_column(shown, "PANE") == [asker + "*"] and "AwaitingConfirmation" in shown
    assert calm not in shown
    listed = json.loads(s.cli("list-panes", "-a", "--json", "-f", WAITING, check=True).stdout)
    assert [p["id"] for p in listed] == [asker]
    assert s.cli("ls", "-f", "#{==:#{agent_state},UsageLimited}", check=True).stdout == "no panes\n"


@pytest.fixture
def two_sessions(muxd_server):
    for command in (["new-session", "-d", "-s", "alpha"], ["new-session", "-d", "-s", "beta"],
                    ["new-window", "-t", "beta"]):
        muxd_server.cli(*command, "--", "sleep", "600", check=True)
    return muxd_server


def test_each_table_keeps_only_what_passes(two_sessions):
    s = two_sessions
    assert table_column(s.cli("ls", "-f", BETA, check=True).stdout, "SESSION") == ["beta", "beta"]
    assert table_column(s.cli("ls", "--sessions", "-f", BETA, check=True).stdout, "SESSION") == ["beta"]
    sessions = json.loads(s.cli("ls", "--sessions", "--json", "-f", BETA, check=True).stdout)
    assert [x["name"] for x in sessions] == ["beta"]
    panes = s.cli("list-panes", "-a", "-f", "#{==:#{session_name},alpha}", check=True).stdout
    assert table_column(panes, "SESSION") == ["alpha"]
    windows = s.cli("list-windows", "-a", "-f", "#{window_active}", check=True).stdout
    assert table_column(windows, "SESSION") == ["alpha", "beta"]
    assert table_column(windows, "WINDOW") == ["0*", "1*"]
    # -F and -f together, as before: the format's lines of the items that pass.
    assert s.cli("ls", "-F", "#{session_name}", "-f", BETA, check=True).stdout == "beta\n"


def test_muxd_tmux_f_prints_what_tmux_prints(two_sessions):
    s = two_sessions
    oracle = TmuxOracle()
    try:
        oracle.run("new-session", "-d", "-s", "alpha", "sleep 600")
        oracle.run("new-session", "-d", "-s", "beta", "sleep 600")
        oracle.run("new-window", "-t", "beta", "sleep 600")
        for command in (["list-sessions"], ["ls"], ["list-windows", "-a"], ["list-panes", "-a"]):
            ours = s.cli("tmux", *command, "-f", BETA, check=True).stdout.splitlines()
            theirs = oracle.run(*command, "-f", BETA).splitlines()
            # The places listed, up to the first space: the rest (history sizes, dates) differs by design.
            assert [line.split()[0] for line in ours] == [line.split()[0] for line in theirs], command
            assert len(ours) == (1 if command[0] in ("ls", "list-sessions") else 2)
    finally:
        oracle.close()


def test_list_clients_takes_F_and_f(two_sessions):
    s = two_sessions
    with outer_terminals(s) as outer:
        terminal = outer(columns=100, lines=30)
        attach_in(terminal, s, "beta")
        tty = s.cli("list-clients", "-F", "#{client_name}", check=True).stdout.strip()
        assert tty.startswith("/dev/")
        on_beta = s.cli("list-clients", "-f", BETA, check=True).stdout
        assert on_beta == f"{tty}: beta [100x30]\n" == s.cli("list-clients", check=True).stdout
        assert s.cli("list-clients", "-f", "#{==:#{session_name},alpha}", check=True).stdout == ""
        shown = s.cli("list-clients", "-F", "#{client_session} #{session_windows} #{client_width}", check=True)
        assert shown.stdout == "beta 2 100\n"
        assert json.loads(s.cli("list-clients", "--json", "-f", "#{==:#{client_height},29}", check=True).stdout) == []
        assert s.cli("tmux", "list-clients", "-f", BETA, check=True).stdout == on_beta


def test_list_buffers_f_and_F_print_what_tmux_prints(muxd_server):
    s = muxd_server
    oracle = TmuxOracle()
    try:
        for name, text in (("b1", "hello"), ("b2", "world, again")):
            s.cli("set-buffer", "-b", name, text, check=True)
            oracle.run("set-buffer", "-b", name, text)
        for args in (["-f", "#{==:#{buffer_name},b2}"], ["-f", "#{m:*hell*,#{buffer_sample}}"],
                     ["-F", "#{buffer_name}=#{buffer_size}", "-f", "#{!=:#{buffer_size},5}"],
                     ["-F", "#{buffer_name}"]):
            ours = s.cli("list-buffers", *args, check=True).stdout
            assert ours == oracle.run("list-buffers", *args), args
            assert ours  # each filter here keeps something
        assert s.cli("list-buffers", "-f", "0", check=True).stdout == ""
    finally:
        oracle.close()
