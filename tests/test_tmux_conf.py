"""A tmux.conf loads in muxd: tmux's options muxd does not act on are kept and shown with tmux
3.3a's defaults and checks (daemon/tmux/options.py), user options (`@name`) work at every
scope, and the ones muxd acts on (renumber-windows, display-time, mode-keys) do what tmux's do.
Real tmux is the oracle: the same file loaded in both shows the same values.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from muxd.daemon.attention.alert_options import TMUX_ALERT_OPTIONS
from muxd.daemon.panes.options import OPTIONS
from muxd.testing.outer_terminal import attached_terminal as attached
from muxd.testing.outer_terminal import outer_terminals, status_line
from muxd.testing.patience import stretched
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
# What a user's ~/.tmux.conf typically holds (keys, looks, plugins), every line valid in tmux 3.3a.
TMUX_CONF = """\
set -g prefix C-a
unbind C-b
bind C-a send-prefix
set -sg escape-time 0
set -g history-limit 50000
set -g base-index 1
setw -g pane-base-index 1
set -g renumber-windows on
setw -g mode-keys emacs
set -g status-style 'bg=colour235,fg=colour136'
set -g status-right '#{session_name} %H:%M'
set -g status-left-length 30
set -g status-position top
set -ga terminal-overrides ",xterm-256color:Tc"
set -g focus-events on
setw -g aggressive-resize on
set -g set-titles on
set -g display-time 2000
setw -g monitor-activity on
set -g visual-activity off
set -g pane-border-style fg=colour240
set -g pane-active-border-style fg=colour33
bind | split-window -h -c '#{pane_current_path}'
bind r source-file ~/.tmux.conf \\; display-message "reloaded"
set -g @plugin 'tmux-plugins/tpm'
setw -g @pane-label 'from the conf'
"""
# (show-options flags, option) of every option the file sets, as tmux shows it back.
SET_IN_CONF = [(["-s"], "escape-time"), (["-g"], "history-limit"), (["-g"], "base-index"),
               (["-gw"], "pane-base-index"), (["-g"], "renumber-windows"), (["-gw"], "mode-keys"),
               (["-g"], "status-style"), (["-g"], "status-right"), (["-g"], "status-left-length"),
               (["-g"], "status-position"), (["-s"], "terminal-overrides"), (["-s"], "focus-events"),
               (["-gw"], "aggressive-resize"), (["-g"], "set-titles"), (["-g"], "display-time"),
               (["-gw"], "monitor-activity"), (["-g"], "visual-activity"), (["-gw"], "pane-border-style"),
               (["-gw"], "pane-active-border-style"), (["-g"], "@plugin"), (["-gw"], "@pane-label"),
               (["-g"], "prefix")]


def _tmux(name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", name, *args], capture_output=True, text=True, check=check, timeout=stretched(10))


@pytest.fixture
def real_tmux():
    """`run(*args)`: a private tmux 3.3a server (started by the test), killed afterwards."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"muxd-conf-{uuid.uuid4().hex[:8]}"
    yield lambda *args, check=True: _tmux(name, *args, check=check)
    _tmux(name, "kill-server", check=False)


def _array(name: str) -> bool:
    """tmux's array options (terminal-overrides[0]…) print differently: muxd keeps one string."""
    return name in ("command-alias", "terminal-overrides", "terminal-features", "user-keys",
                    "status-format", "update-environment", "pane-colours")


def test_tmux_only_options_show_tmuxs_defaults(muxd_server, real_tmux):
    real_tmux("-f", "/dev/null", "new-session", "-d", "cat")
    theirs: dict[str, str] = {}
    ours: dict[str, str] = {}
    for scope in (["-s"], ["-g"], ["-gw"]):
        for line in real_tmux("show-options", *scope).stdout.splitlines():
            theirs[line.split(" ", 1)[0]] = line
        for line in muxd_server.cli("show-options", *scope, check=True).stdout.splitlines():
            ours[line.split(" ", 1)[0]] = line
    # tmux's alert options are muxd's own now (acted on), with tmux's defaults all the same.
    alerts = {row[0] for row in TMUX_ALERT_OPTIONS}
    inert = sorted(name for name, option in OPTIONS.items()
                   if (option.inert or name in alerts) and not _array(name))
    assert len(inert) > 80
    assert {name: ours.get(name) for name in inert} == {name: theirs[name] for name in inert}


def test_a_tmux_conf_loads_and_shows_what_tmux_shows(muxd_server, real_tmux, tmp_path):
    conf = tmp_path / "tmux.conf"
    conf.write_text(TMUX_CONF)
    real_tmux("-f", str(conf), "new-session", "-d", "cat")
    s = muxd_server
    s.cli("new-session", "-d", "-s", "a", *SHELL, check=True)
    loaded = s.cli("source-file", str(conf))
    assert (loaded.returncode, loaded.stderr) == (0, "")
    for flags, name in SET_IN_CONF:
        theirs = real_tmux("show-options", "-v", *flags, name).stdout
        ours = s.cli("show-options", "-v", *flags, name, check=True).stdout
        if _array(name):  # tmux keeps `-ga` as elements split at commas, muxd as one string
            assert [x for x in ours.strip().split(",") if x] == theirs.split(), name
        else:
            assert ours == theirs, name


def test_values_are_checked_as_tmux_checks_them(muxd_server, real_tmux):
    real_tmux("-f", "/dev/null", "new-session", "-d", "cat")
    s = muxd_server
    s.cli("new-session", "-d", "-s", "a", *SHELL, check=True)
    for args in (["-sg", "escape-time", "abc"], ["-g", "status-position", "middle"],
                 ["-g", "visual-bell", "loud"], ["-gw", "monitor-activity", "maybe"],
                 ["-g", "status-style", "bg=nosuch"]):
        theirs = real_tmux("set-option", *args, check=False)
        ours = s.cli("set-option", *args)
        assert ours.returncode == 1 and theirs.returncode == 1, args
        assert theirs.stderr.strip() in ours.stderr and len(ours.stderr.splitlines()) == 1, (ours.stderr, theirs)
    # A flag without a value toggles, as muxd's own do; -o refuses a value already set.
    s.cli("set-option", "-g", "focus-events", check=True)
    assert s.cli("show-options", "-sv", "focus-events", check=True).stdout == "on\n"
    assert "already set" in s.cli("set-option", "-o", "-g", "focus-events", "off").stderr
    s.cli("set-option", "-u", "-g", "focus-events", check=True)
    assert s.cli("show-options", "-sv", "focus-events", check=True).stdout == "off\n"


def test_user_options_at_each_scope(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "a", *SHELL, check=True)
    unknown = s.cli("show-options", "-g", "@theme")
    assert (unknown.returncode, unknown.stderr.strip().endswith("invalid option: @theme")) == (1, True)
    s.cli("set-option", "-g", "@theme", "dark blue", check=True)
    s.cli("set-option", "-ga", "@theme", "!", check=True)
    s.cli("set-window-option", "-g", "@theme", "window's", check=True)
    s.cli("set-option", "-t", "a", "@theme", "a's own", check=True)
    assert s.cli("show-options", "-gv", "@theme", check=True).stdout == "dark blue!\n"
    assert s.cli("show-options", "-gwv", "@theme", check=True).stdout == "window's\n"
    assert s.cli("show-options", "-t", "a", check=True).stdout == '@theme "a\'s own"\n'
    assert s.cli("show-options", "-g", check=True).stdout.splitlines()[0] == '@theme "dark blue!"'  # first
    s.cli("set-option", "-gu", "@theme", check=True)
    assert s.cli("show-options", "-gq", "@theme", check=True).stdout == ""


def test_the_shim_keeps_what_a_tool_sets(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "a", *SHELL, check=True)

    def shim(*args: str) -> str:
        result = subprocess.run([sys.executable, "-m", "muxd", "tmux", "-L", s.name, *args], env=s.env,
                                capture_output=True, text=True, check=False, timeout=stretched(30))
        assert (result.returncode, result.stderr) == (0, ""), result
        return result.stdout

    shim("set-option", "-g", "pane-border-status", "top")
    shim("set-option", "-p", "-t", "a", "window-style", "bg=default,fg=blue")
    assert shim("show-options", "-gv", "pane-border-status") == "top\n"
    assert shim("show-options", "-pv", "-t", "a", "window-style") == "bg=default,fg=blue\n"
    assert shim("display-message", "-p", "#{focus-events}") == "0\n"  # formats show defaults


def test_renumber_windows_closes_the_gaps(muxd_server):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "a", *SHELL, check=True)
    for _ in range(3):
        s.cli("new-window", "-d", "-t", "a", *SHELL[1:], check=True)

    def indexes() -> list[str]:
        return s.cli("list-windows", "-t", "a", "-F", "#{window_index}", check=True).stdout.split()

    s.cli("kill-window", "-t", "a:1", check=True)
    assert indexes() == ["0", "2", "3"]  # off, as tmux's default: gaps stay
    s.cli("set-option", "-t", "a", "renumber-windows", "on", check=True)
    s.cli("set-option", "-t", "a", "base-index", "1", check=True)
    s.cli("kill-window", "-t", "a:2", check=True)
    assert indexes() == ["1", "2"]


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def _copied(server, text: str) -> None:
    wait_until(lambda: server.cli("show-buffer").stdout == text, timeout=10, message=f"buffer {text!r}")


def test_emacs_copy_mode_keys(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "e", *SHELL, check=True)
    s.cli("set-window-option", "-g", "mode-keys", "emacs", check=True)
    term = attached(outer, s, "e")
    term.type("echo alpha be$((6*7)); echo omega", enter=True)
    term.wait_for("\nomega\n")
    # Keys are taken in order: those after `C-b [` are copy mode's.
    term.keys("C-b", "[", "k", "C-p", "C-a", "C-Space", "C-e", "M-w")  # k: no motion in emacs's table
    _copied(s, "omega")
    term.keys("C-b", "[", "C-p", "C-p", "C-a", "M-f", "C-Space", "C-e", "C-w")  # M-f: to the word's end
    _copied(s, "a be42")
    term.keys("C-b", "[", "C-p", "q")  # q leaves: what follows goes to the shell
    term.type("echo left-$((2*3))", enter=True)
    term.wait_for("\nleft-6\n")

def test_display_time_decides_how_long_a_message_stays(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "m", *SHELL, check=True)
    term = attached(outer, s, "m")

    def shown(note: str):  # the message itself, not the prompt line it was typed in
        return lambda sc: note in status_line(sc) and "display-message" not in status_line(sc)

    s.cli("set-option", "-g", "display-time", "200", check=True)
    term.keys("C-b", ":")
    term.type("display-message brief-note", enter=True)
    term.wait_for(shown("brief-note"))
    term.wait_for(lambda sc: "brief-note" not in status_line(sc), timeout=2.5, wall=True)  # the default is 3 s

    s.cli("set-option", "-g", "display-time", "0", check=True)  # 0: until a key
    term.keys("C-b", ":")
    term.type("display-message lasting-note", enter=True)
    term.wait_for(shown("lasting-note"))
    held_until = time.monotonic() + 3.5  # past the 3 s default: it must still be there
    while time.monotonic() < held_until:
        assert shown("lasting-note")(term.screen())
    term.keys("x")
    term.wait_for(lambda sc: "lasting-note" not in status_line(sc))


def _sgr_before(row: str, text: str) -> set[str]:
    """The SGR parameters in force where `text` starts in a row captured with escapes."""
    params: set[str] = set()
    for match in re.finditer(r"\x1b\[([0-9;]*)m", row[:row.index(text)]):
        params = set() if match.group(1) in ("", "0") else params | set(match.group(1).split(";"))
    return params


def test_status_and_message_styles_are_drawn(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "look", *SHELL, check=True)
    term = attached(outer, s, "look")

    def status(screen: str) -> str:
        return screen.rstrip("\n").split("\n")[-1]

    assert {"30", "42"} <= _sgr_before(status(term.screen(escapes=True)), "[look]")  # tmux's green
    s.cli("set-option", "-g", "status-style", "bg=colour24,fg=white,bold", check=True)
    term.wait_for(lambda sc: {"48", "5", "24", "37", "1"} <= _sgr_before(status(sc), "[look]"), escapes=True)
    s.cli("set-option", "-g", "message-style", "bg=red,fg=white", check=True)
    term.keys("C-b", ":")
    term.type("display-message styled-note", enter=True)
    term.wait_for(lambda sc: "styled-note" in status(sc) and "display-message" not in status(sc)
                  and {"41", "37"} <= _sgr_before(status(sc), "styled-note"), escapes=True)


def test_status_left_and_right_are_tmux_formats(muxd_server, outer):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "fmt", "-n", "editor", *SHELL, check=True)
    term = attached(outer, s, "fmt")
    term.wait_for(lambda sc: status_line(sc).startswith("[fmt] 0:editor*"))
    year = time.strftime("%Y")
    s.cli("set-option", "-g", "status-right", "#{session_name}|#I|#{pane_current_command}|%Y", check=True)
    s.cli("set-option", "-g", "status-left", "<#S> #[fg=red]", check=True)
    term.wait_for(lambda sc: status_line(sc).startswith("<fmt> 0:editor*")
                  and status_line(sc).endswith(f"fmt|0|bash|{year}"))
    s.cli("set-option", "-g", "status-right-length", "5", check=True)
    term.wait_for(lambda sc: status_line(sc).endswith(" fmt|0"))
    s.cli("new-window", "-t", "fmt", "-n", "two", *SHELL[1:], check=True)  # what it shows changed: at once
    term.wait_for(lambda sc: status_line(sc).startswith("<fmt> 0:editor- 1:two*") and status_line(sc).endswith(" fmt|1"))
