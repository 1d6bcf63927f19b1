"""tmux's daily-use commands through the real CLI and a real daemon: select-pane, select-window,
rename-*, set-option / show-options, list-keys. One server for the module (each test has its own
sessions and puts back any global option it changes)."""

from __future__ import annotations

import pytest

from muxd.client.blocking import BlockingClient
from muxd.testing.server import InProcessCli
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]


@pytest.fixture
def s(muxd_module_server):
    return InProcessCli(muxd_module_server)


def panes(s, target):
    """Read back in this process (a CLI per look would double the module's time)."""
    with BlockingClient.connect(s.socket_path) as client:
        return list(client.call("list-panes", "pane-list", target=target).panes)


def active_pane(s, target) -> str:
    return next(p["id"] for p in panes(s, target) if p["active"])


def windows(s, session):
    with BlockingClient.connect(s.socket_path) as client:
        return list(client.call("list-windows", "window-list", target=session).windows)


def active_window(s, session) -> int:
    return next(w["index"] for w in windows(s, session) if w["active"])


def fails(s, *args: str) -> str:
    """Run a command that must fail with one line on stderr; return that line."""
    out = s.cli(*args)
    assert out.returncode == 1, out
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    return out.stderr.strip()


def test_select_pane_moves_to_neighbours_the_last_pane_and_sets_a_title(s):
    left = s.cli("new-session", "-d", "-s", "sel", "-P", *SHELL, check=True).stdout.strip()
    right = s.cli("split-window", "-h", "-t", left, "-P", *SHELL, check=True).stdout.strip()
    assert active_pane(s, "sel") == right
    s.cli("select-pane", "-t", right, "-L", check=True)
    assert active_pane(s, "sel") == left
    s.cli("select-pane", "-t", left, "-U", check=True)  # nothing above: nothing changes
    assert active_pane(s, "sel") == left
    s.cli("select-pane", "-t", "sel", "-l", check=True)
    assert active_pane(s, "sel") == right
    s.cli("last-pane", "-t", "sel", check=True)
    assert active_pane(s, "sel") == left
    s.cli("select-pane", "-t", "sel:0.1", check=True)
    assert active_pane(s, "sel") == right
    s.cli("select-pane", "-t", left, "-T", "build log", check=True)
    assert {p["id"]: p["title"] for p in panes(s, "sel")}[left] == "build log"
    s.cli("send-keys", "-t", left, "printf '\\033]2;from-%s\\007' program", "Enter", check=True)
    wait_until(lambda: {p["id"]: p["title"] for p in panes(s, "sel")}[left] == "from-program", timeout=10,
               message="the program's own title replaces it")
    assert active_pane(s, "sel") == left
    assert fails(s, "select-pane", "-t", "sel:0.7") == "muxd: can't find pane: sel:0.7"
    assert "not allowed with argument" in s.cli("select-pane", "-L", "-R").stderr  # one direction at a time


def test_select_window_next_previous_last_and_renames(s):
    s.cli("new-session", "-d", "-s", "win", *SHELL, check=True)
    s.cli("new-window", "-t", "win", *SHELL, check=True)
    s.cli("new-window", "-t", "win", *SHELL, check=True)
    assert active_window(s, "win") == 2
    s.cli("select-window", "-t", "win:0", check=True)
    assert active_window(s, "win") == 0
    s.cli("select-window", "-t", "win", "-n", check=True)
    assert active_window(s, "win") == 1
    s.cli("select-window", "-t", "win", "-p", check=True)
    assert active_window(s, "win") == 0
    s.cli("select-window", "-t", "win", "-l", check=True)
    assert active_window(s, "win") == 1
    s.cli("last-window", "-t", "win", check=True)
    assert active_window(s, "win") == 0
    s.cli("previous-window", "-t", "win", check=True)  # wraps round, as tmux's
    assert active_window(s, "win") == 2
    s.cli("next-window", "-t", "win", check=True)
    assert active_window(s, "win") == 0
    s.cli("select-window", "-T", "-t", "win:0", check=True)  # current already: the last one
    assert active_window(s, "win") == 2
    s.cli("select-window", "-T", "-t", "win:1", check=True)
    assert active_window(s, "win") == 1
    assert fails(s, "select-window", "-t", "win:9") == "muxd: can't find window: 9"

    s.cli("rename-window", "-t", "win:1", "logs", check=True)
    assert [w["name"] for w in windows(s, "win")][1] == "logs"
    s.cli("select-window", "-t", "win:logs", check=True)  # the new name is a target
    assert active_window(s, "win") == 1
    s.cli("rename-session", "-t", "win", "renamed", check=True)
    assert s.cli("has-session", "-t", "renamed").returncode == 0
    assert s.cli("has-session", "-t", "win").returncode == 1
    s.cli("new-session", "-d", "-s", "other", *SHELL, check=True)
    assert fails(s, "rename-session", "-t", "renamed", "other") == "muxd: duplicate session: other"
    assert "no ':' or '.'" in fails(s, "rename-session", "-t", "renamed", "a:b")


def test_options_show_set_unset_and_errors_as_tmux(s):
    shown = s.cli("show-options", "-g", check=True).stdout
    assert "prefix C-b\n" in shown and "status on\n" in shown and "default-command ''\n" in shown
    names = [line.split()[0] for line in shown.splitlines()]
    assert names == sorted(names) and "mouse" in names  # alphabetical, as tmux lists them
    assert "\ndefault-shell /" in shown  # the shell panes get, not an empty default
    # Each scope lists tmux's options too (kept, no effect), as tmux lists them.
    assert "buffer-limit 50\ncommand-alias" in s.cli("show-options", "-s", check=True).stdout
    window_options = s.cli("show-options", "-gw", check=True).stdout
    assert "\npane-base-index 0\n" in window_options and "\nremain-on-exit off\n" in window_options
    assert s.cli("show-options", "-gv", "prefix", check=True).stdout == "C-b\n"
    # tmux's `show` is show-options: muxd's `show` (an execution) has no short option to confuse.
    assert s.cli("show", "-gv", "prefix", check=True).stdout == "C-b\n"
    assert s.cli("show", "-g", "prefix", check=True).stdout == "prefix C-b\n"
    s.cli("new-session", "-d", "-s", "opt", *SHELL, check=True)
    # A session's own values: none until set, then only those; the name decides the scope.
    assert s.cli("show-options", "-t", "opt", check=True).stdout == ""
    s.cli("set-option", "-t", "opt", "prefix", "C-a", check=True)
    s.cli("set", "-t", "opt", "remain-on-exit", "on", check=True)  # a window option, on opt's window
    assert s.cli("show-options", "-t", "opt", check=True).stdout == "prefix C-a\n"
    assert s.cli("show-window-options", "-t", "opt", check=True).stdout == "remain-on-exit on\n"
    assert s.cli("show-options", "-gv", "prefix", check=True).stdout == "C-b\n"  # global untouched
    s.cli("set", "-t", "opt", "remain-on-exit", check=True)  # no value: toggles (on -> off)
    assert s.cli("show-window-options", "-t", "opt", check=True).stdout == "remain-on-exit off\n"
    s.cli("set", "-t", "opt", "remain-on-exit", "failed", check=True)
    assert fails(s, "set", "-t", "opt", "remain-on-exit", "sometimes") == "muxd: unknown value: sometimes"
    s.cli("set", "-p", "-t", "opt", "remain-on-exit", "off", check=True)
    assert s.cli("show-options", "-p", "-t", "opt", check=True).stdout == "remain-on-exit off\n"
    s.cli("set", "-u", "-t", "opt", "prefix", check=True)
    assert s.cli("show-options", "-t", "opt", check=True).stdout == ""
    s.cli("set", "-t", "opt", "status", check=True)  # a flag without a value toggles
    assert s.cli("show-options", "-v", "-t", "opt", "status", check=True).stdout == "off\n"
    assert fails(s, "set", "-o", "-t", "opt", "status", "on") == "muxd: already set: status"

    assert fails(s, "set-option", "-g", "foo", "bar") == "muxd: invalid option: foo"
    assert s.cli("set-option", "-gq", "foo", "bar").returncode == 0
    assert fails(s, "show-options", "-g", "foo") == "muxd: invalid option: foo"
    assert fails(s, "set", "-g", "base-index", "x") == "muxd: value is invalid: x"
    assert fails(s, "set", "-g", "status", "maybe") == "muxd: unknown value: maybe"
    assert fails(s, "set", "-g", "prefix", "NotAKey") == "muxd: unknown key: NotAKey"
    assert fails(s, "set", "-g", "default-shell", "/nonexistent/sh") == "muxd: not a suitable shell: /nonexistent/sh"


def test_base_index_and_default_command_shape_new_windows(s):
    s.cli("set", "-g", "base-index", "1", check=True)
    s.cli("set", "-g", "default-command", "echo from-default-$((6*7)) $TERM; exec sleep 60", check=True)
    s.cli("set", "-g", "default-terminal", "tmux-256color", check=True)
    try:
        s.cli("new-session", "-d", "-s", "based", check=True)  # no command: the default command
        s.cli("new-window", "-t", "based", *SHELL, check=True)
        assert [w["index"] for w in windows(s, "based")] == [1, 2]
        s.wait_for_text("based:1", "from-default-42 tmux-256color")
    finally:
        s.cli("set", "-gu", "base-index", check=True)
        s.cli("set", "-gu", "default-command", check=True)
        s.cli("set", "-gu", "default-terminal", check=True)
    assert fails(s, "set", "-g", "default-terminal", "a b") == "muxd: invalid terminal type: 'a b'"
    s.cli("new-session", "-d", "-s", "zero", *SHELL, check=True)
    assert [w["index"] for w in windows(s, "zero")] == [0]


def test_bind_key_and_unbind_key_change_what_list_keys_prints(s):
    s.cli("bind-key", "|", "split-window", "-h", check=True)
    s.cli("bind", "-n", "M-Left", "select-pane", "-L", check=True)
    s.cli("bind", "R", "source-file", "/tmp/x.conf", ";", "display-message", "-p", "done", check=True)
    s.cli("bind", "c", "new-window", "-d", check=True)  # over a default key
    s.cli("unbind", "z", check=True)
    try:
        lines = s.cli("list-keys", check=True).stdout.splitlines()
        assert "bind-key    -T prefix |       split-window -h" in lines
        assert "bind-key    -T prefix R       source-file /tmp/x.conf \\; display-message -p done" in lines
        assert "bind-key    -T prefix c       new-window -d" in lines and not any(" z " in line for line in lines)
        assert s.cli("list-keys", "-T", "root", check=True).stdout == "bind-key -T root M-Left select-pane -L\n"
        assert "C-b |       split-window -h" in s.cli("list-keys", "-N", check=True).stdout
        assert fails(s, "list-keys", "z") == "muxd: unknown key: z"
        assert fails(s, "bind", "F99", "new-window") == "muxd: unknown key: F99"
        assert fails(s, "bind", "x", "no-such-command") == "muxd: unknown command: no-such-command"
        assert fails(s, "bind", "x") == "muxd: a command is needed: bind-key KEY COMMAND [ARGUMENTS]"
        assert fails(s, "bind", "-T", "vi", "x", "new-window") == "muxd: table vi doesn't exist"
        assert fails(s, "unbind") == "muxd: a key is needed: unbind-key [-a] KEY"
    finally:
        for key in ("|", "R"):
            s.cli("unbind", key, check=True)
        s.cli("unbind", "-n", "M-Left", check=True)
        # the module's other tests want tmux's c and z: bound to their default commands again
        s.cli("bind", "c", "new-window", check=True)
        s.cli("bind", "z", "resize-pane", "-Z", check=True)
    assert s.cli("list-keys", "-T", "root", check=True).stdout == ""
    assert fails(s, "list-keys", "|") == "muxd: unknown key: |"


def test_list_keys_prints_the_prefix_table_as_bind_key_lines(s):
    lines = s.cli("list-keys", check=True).stdout.splitlines()
    assert lines[0] == "bind-key    -T prefix C-b     send-prefix"
    for line in ("bind-key    -T prefix c       new-window",
                 "bind-key    -T prefix \\%      split-window -h",
                 "bind-key    -T prefix \\\"      split-window",
                 "bind-key    -T prefix \\$      command-prompt -I \"#S\" { rename-session \"%%\" }",
                 "bind-key    -T prefix 3       select-window -t :=3",
                 "bind-key -r -T prefix Left    select-pane -L",
                 "bind-key -r -T prefix M-Left  resize-pane -L 5",
                 "bind-key -r -T prefix C-Up    resize-pane -U",
                 "bind-key    -T prefix o       select-pane -t :.+",
                 "bind-key    -T prefix Space   next-layout",
                 "bind-key    -T prefix w       choose-tree -Zw",
                 "bind-key    -T prefix d       detach-client"):
        assert line in lines, line
    assert "C-b $       Rename the session" in s.cli("list-keys", "-N", check=True).stdout
    assert fails(s, "list-keys", "-T", "copy-mode-x") == "muxd: table copy-mode-x doesn't exist"
    assert s.cli("list-keys", "-T", "root", check=True).stdout == ""  # muxd binds no key alone by default
    assert s.cli("list-keys", "-T", "prefix", "z", check=True).stdout == "bind-key    -T prefix z       resize-pane -Z\n"
    assert fails(s, "list-keys", "F12") == "muxd: unknown key: F12"
    s.cli("set", "-g", "prefix", "C-a", check=True)
    try:
        assert s.cli("list-keys", check=True).stdout.startswith("bind-key    -T prefix C-a     send-prefix\n")
    finally:
        s.cli("set", "-gu", "prefix", check=True)


def test_scoped_pane_tokens_cannot_set_options_or_read_buffers(s, tmp_path):
    pane = s.cli("new-session", "-d", "-s", "agent", "-P", *SHELL, check=True).stdout.strip()
    token = tmp_path / "token"  # the pane's own token, as an agent inside it presents it
    s.cli("send-keys", "-t", pane, f"echo $MUXD_TOKEN > {token}", "Enter", check=True)
    wait_until(lambda: token.exists() and token.read_text().startswith("muxd_"), timeout=10,
               message="token written")
    as_agent = ["--token-file", str(token)]
    out = s.cli(*as_agent, "set", "-g", "status", "off")
    assert out.returncode == 1 and "set-option is dangerous" in out.stderr, out.stderr
    out = s.cli(*as_agent, "list-buffers")
    assert out.returncode == 1 and "not available to pane-scoped tokens" in out.stderr, out.stderr
    s.cli(*as_agent, "select-pane", "-t", pane, check=True)  # its own pane: allowed


def test_history_limit_bounds_the_history_of_new_panes(s):
    def history_rows(session: str) -> int:
        s.wait_for_text(session, "done\n")
        return len(s.capture(session, "-S", "-").rstrip("\n").split("\n"))

    s.cli("set", "-g", "history-limit", "100", check=True)
    try:
        s.cli("new-session", "-d", "-s", "short", "-x", "80", "-y", "10", "--", "sh", "-c",
              "seq 1 3000; echo done; exec sleep 60", check=True)
    finally:
        s.cli("set", "-gu", "history-limit", check=True)
    s.cli("new-session", "-d", "-s", "long", "-x", "80", "-y", "10", "--", "sh", "-c",
          "seq 1 3000; echo done; exec sleep 60", check=True)
    # At least 100 rows of 80 columns' worth: more of these short ones, far from all 3000.
    assert 100 <= history_rows("short") < 1000
    assert history_rows("long") > 3000
    # tmux's formats say so: the budget in full rows of the pane's width, and what is held now.
    limits = s.cli("list-panes", "-t", "short", "-F", "#{history_limit} #{history_size} #{history_bytes}",
                   check=True).stdout.split()
    limit, size, used = map(int, limits)
    assert limit == 100 and size > limit and 0 < used <= limit * (80 + 32)
    assert int(s.cli("display-message", "-p", "-t", "long", "#{history_limit}", check=True).stdout) > 3000


def test_a_new_panes_directory_may_be_a_format_of_the_target_pane(s, tmp_path):
    (tmp_path / "sub").mkdir()
    s.cli("new-session", "-d", "-s", "where", "-c", str(tmp_path / "sub"), *SHELL, check=True)
    s.cli("split-window", "-t", "where", "-c", "#{pane_current_path}", *SHELL, check=True)
    s.cli("new-window", "-t", "where", "-c", "#{pane_current_path}/..", *SHELL, check=True)
    listed = s.cli("list-panes", "-s", "-t", "where", "-F", "#{pane_current_path}", check=True).stdout.split()
    assert listed == [str(tmp_path / "sub")] * 2 + [str(tmp_path)]
    # the session's active pane is now the new window's
    assert fails(s, "split-window", "-t", "where", "-c", "#{pane_current_path}/nowhere", *SHELL) == (
        f"muxd: {tmp_path}/nowhere: no such directory")


def test_pane_base_index_numbers_a_windows_panes_from_it(s):
    s.cli("new-session", "-d", "-s", "pbase", *SHELL, check=True)
    s.cli("split-window", "-t", "pbase", *SHELL, check=True)
    first, second = (p.id for p in panes(s, "pbase"))
    assert fails(s, "display-message", "-p", "-t", "pbase:0.2", "#{pane_id}") == "muxd: can't find pane: pbase:0.2"
    s.cli("setw", "-g", "pane-base-index", "1", check=True)
    try:
        assert s.cli("list-panes", "-t", "pbase", "-F", "#{pane_index} #{pane_id}", check=True).stdout == (
            f"1 {first}\n2 {second}\n")
        assert s.cli("display-message", "-p", "-t", "pbase:0.2", "#{pane_id}", check=True).stdout == f"{second}\n"
        assert fails(s, "display-message", "-p", "-t", "pbase:0.0", "#{pane_id}") == "muxd: can't find pane: pbase:0.0"
        s.cli("setw", "-t", "pbase", "pane-base-index", "5", check=True)  # the window's own value wins
        assert s.cli("display-message", "-p", "-t", "pbase:0.5", "#{pane_id}", check=True).stdout == f"{first}\n"
    finally:
        s.cli("setw", "-gu", "pane-base-index", check=True)
    s.cli("setw", "-t", "pbase", "-u", "pane-base-index", check=True)
    assert s.cli("display-message", "-p", "-t", "pbase:0.0", "#{pane_id}", check=True).stdout == f"{first}\n"
