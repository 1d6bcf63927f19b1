"""A real-world ~/.tmux.conf loads in muxd as in tmux 3.3a: a new prefix, TPM's lines, copy-mode-vi
bindings, if-shell on tmux's version, run-shell. Real tmux is the oracle for what list-keys and
show-options print; TPM's `run` leaves no window; an attached client's copy mode uses the keys
the file rebinds.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from muxd.testing.outer_terminal import attached_terminal as attached
from muxd.testing.outer_terminal import outer_terminals
from muxd.testing.wait import wait_until

SHELL = ["--", "bash", "--norc", "--noprofile"]
TPM = "~/.tmux/plugins/tpm/tpm"
# A typical file, every line valid in tmux 3.3a ({bg} and {piped}: files the test reads).
REAL_WORLD_CONF = """\
# prefix
set -g prefix C-a
unbind C-b
bind C-a send-prefix
set -g mouse on
set -g default-terminal "tmux-256color"
set -ga terminal-overrides ",xterm-256color:Tc"
set -sg escape-time 0
set -g history-limit 50000
set -g base-index 1
set -g status-style bg=colour235
setw -g mode-keys vi
bind r source-file ~/.tmux.conf \\; display "Reloaded"
bind | split-window -h -c "#{{pane_current_path}}"
# copy mode, vi
bind -T copy-mode-vi v send -X begin-selection
bind -T copy-mode-vi y send-keys -X copy-selection-and-cancel
bind-key -T copy-mode-vi Y send -X copy-pipe-and-cancel "cat > {piped}"
bind -T copy-mode-vi C-v send -X rectangle-toggle
unbind -T copy-mode-vi Space
# version checks
if-shell '[ "$(tmux -V | cut -c 6-)" \\> 3.0 ]' 'set -g @newer yes' 'set -g @newer no'
if-shell "tmux -V | grep -q 'tmux 1\\.'" "set -g @ancient yes" "set -g @ancient no"
if -F '#{{==:#{{mode-keys}},vi}}' 'set -g @vi yes'
set -g no-such-option on
# plugins
set -g @plugin 'tmux-plugins/tpm'
set -g @plugin 'tmux-plugins/tmux-sensible'
run -b 'echo from-run-b > {bg}'
run '{tpm}'
set -g @loaded-to-the-end yes
"""
COMPARED_KEYS = ("v", "y", "Y", "C-v", "Enter", "q")
COMPARED_OPTIONS = [(["-g"], "prefix"), (["-gw"], "mode-keys"), (["-g"], "mouse"), (["-g"], "default-terminal"),
                    (["-s"], "escape-time"), (["-g"], "history-limit"), (["-g"], "base-index"),
                    (["-g"], "status-style"), (["-g"], "@plugin"), (["-g"], "@newer"), (["-g"], "@ancient"),
                    (["-g"], "@vi"), (["-g"], "@loaded-to-the-end")]


@pytest.fixture
def real_tmux():
    """`run(*args)`: a private tmux 3.3a server (started by the test), killed afterwards."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"muxd-keys-{uuid.uuid4().hex[:8]}"

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", name, *args], capture_output=True, text=True, check=check, timeout=30)

    yield run
    run("kill-server", check=False)


def _conf(directory: Path, name: str) -> tuple[Path, Path, Path]:
    """The file, with its own files for `run -b`'s output and copy-pipe's."""
    if Path(TPM).expanduser().exists():
        pytest.skip("TPM is installed here: its run would do things")
    bg, piped = directory / f"{name}.bg", directory / "piped"  # the same in both: list-keys shows it
    conf = directory / f"{name}.conf"
    conf.write_text(REAL_WORLD_CONF.format(bg=bg, piped=piped, tpm=TPM))
    return conf, bg, piped


def _bindings(list_keys: str) -> dict[str, list[str]]:
    """list-keys lines by key, their words (tmux pads the key column to its widest key)."""
    return {line.split()[3]: line.split() for line in list_keys.splitlines()}


def test_a_real_world_conf_loads_as_in_tmux_and_tpm_leaves_no_window(muxd_unstarted, real_tmux, tmp_path):
    tmux_conf, tmux_bg, _ = _conf(tmp_path, "tmux")
    real_tmux("-f", str(tmux_conf), "new-session", "-d", "-s", "w", "cat")
    s = muxd_unstarted
    conf, bg, _ = _conf(tmp_path, "muxd")
    started = s.cli("-f", str(conf), "new-session", "-d", "-s", "w", *SHELL)
    assert started.returncode == 0, started.stderr
    s.pid = int((s.socket_dir / f"{s.name}.lock").read_text().strip())
    # One line for each line muxd cannot take; TPM's missing script is tmux's message, not a window.
    warnings = started.stderr.splitlines()
    assert f"muxd: {conf}:19: copy-mode command rectangle-toggle: not supported by muxd" in warnings
    assert f"muxd: {conf}:25: invalid option: no-such-option" in warnings
    assert f"muxd: '{TPM}' returned 127" in warnings
    assert "Traceback" not in started.stderr
    windows = s.run_here("list-windows", "-a", "-F", "#{session_name}:#{window_index}", check=True).stdout
    assert windows.split() == real_tmux("list-windows", "-a", "-F", "#{session_name}:#{window_index}").stdout.split()
    assert windows.split() == ["w:1"]
    assert "tpm" not in s.run_here("history", check=True).stdout  # no execution was recorded either
    for path in (bg, tmux_bg):  # run -b ran, in the background
        wait_until(lambda path=path: path.exists() and path.read_text() == "from-run-b\n", timeout=30,
                   message=f"{path} written by run -b")

    ours = _bindings(s.run_here("list-keys", "-T", "copy-mode-vi", check=True).stdout)
    theirs = _bindings(real_tmux("list-keys", "-T", "copy-mode-vi").stdout)
    for key in ("v", "y", "Y", "Enter", "q", "j", "/"):
        assert ours[key] == theirs[key], key
    assert "Space" not in ours and "Space" not in theirs  # unbound
    assert " ".join(ours["Y"]).endswith(f'copy-pipe-and-cancel "cat > {tmp_path}/piped"')
    assert s.run_here("list-keys", "r", check=True).stdout.split()[3:] == (
        "r source-file ~/.tmux.conf \\; display-message Reloaded".split())
    for flags, name in COMPARED_OPTIONS:
        theirs_value = real_tmux("show-options", "-v", *flags, name).stdout
        assert s.run_here("show-options", "-v", *flags, name, check=True).stdout == theirs_value, name
    assert s.run_here("show-options", "-gv", "@newer", check=True).stdout == "yes\n"  # tmux 3.3a ran
    assert s.run_here("show-options", "-gv", "@ancient", check=True).stdout == "no\n"


def test_if_shell_and_run_shell_from_the_command_line(muxd_server, tmp_path):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "a", *SHELL, check=True)

    def option(name: str) -> str:
        return s.run_here("show-options", "-gqv", name, check=True).stdout.strip()

    s.cli("if-shell", "test -d /", "set -g @dir yes", "set -g @dir no", check=True)
    assert option("@dir") == "yes"
    s.cli("if", "test -d /nowhere", "set -g @dir yes ; set -g @two 2", "set -g @dir no ; set -g @two 3", check=True)
    assert (option("@dir"), option("@two")) == ("no", "3")
    s.cli("if-shell", "-F", "-t", "a", "#{==:#{session_name},a}", "set -g @in a", "set -g @in other", check=True)
    assert option("@in") == "a"
    s.cli("if-shell", "-F", "0", "set -g @zero true", check=True)  # "0" is false, no else: nothing
    assert option("@zero") == ""
    s.cli("if-shell", "-b", "true", "set -g @later yes", check=True)
    wait_until(lambda: option("@later") == "yes", timeout=30, message="if-shell -b's command ran")
    failed = s.cli("if-shell", "true", "set -g no-such-option 1")
    assert (failed.returncode, failed.stderr) == (1, "muxd: invalid option: no-such-option\n")
    # run (tmux's run-shell, as a config file reads it) prints its output; it makes no window.
    conf = tmp_path / "run.conf"
    conf.write_text("run 'echo hello from run'\nrun 'exit 3'\n")
    ran = s.cli("source-file", str(conf))
    assert (ran.returncode, ran.stdout, ran.stderr) == (1, "hello from run\n", "muxd: 'exit 3' returned 3\n")
    assert s.run_here("list-windows", "-a", "-F", "#{window_id}", check=True).stdout.split() == ["@0"]


def test_binding_an_unknown_copy_mode_command_is_refused(muxd_server):
    s = muxd_server
    bad = s.cli("bind-key", "-T", "copy-mode-vi", "v", "send-keys", "-X", "no-such-thing")
    assert (bad.returncode, bad.stderr) == (1, "muxd: unknown copy-mode command: no-such-thing\n")
    bad = s.cli("bind-key", "-T", "copy-mode-x", "v", "send-keys", "-X", "cancel")
    assert (bad.returncode, bad.stderr) == (1, "muxd: table copy-mode-x doesn't exist\n")
    s.cli("unbind-key", "-a", "-T", "copy-mode", check=True)
    assert s.cli("list-keys", "-T", "copy-mode", check=True).stdout == ""
    assert "send-keys -X cancel" in s.cli("list-keys", "-T", "copy-mode-vi", "q", check=True).stdout


@pytest.fixture
def outer(muxd_server):
    with outer_terminals(muxd_server) as make:
        yield make


def test_an_attached_copy_mode_uses_the_keys_the_conf_binds(muxd_server, outer, tmp_path):
    s = muxd_server
    piped = tmp_path / "piped"
    conf = tmp_path / "keys.conf"
    conf.write_text("setw -g mode-keys vi\n"
                    "bind -T copy-mode-vi v send -X begin-selection\n"
                    "bind -T copy-mode-vi y send -X copy-selection-and-cancel\n"
                    "bind -T copy-mode-vi i send -X begin-selection\n"  # no key of tmux's defaults
                    f"bind -T copy-mode-vi Y send -X copy-pipe-and-cancel 'cat > {piped}'\n"
                    "bind -T copy-mode-vi t send -X top-line\n"
                    "unbind -T copy-mode-vi k\n")
    s.cli("new-session", "-d", "-s", "c", *SHELL, check=True)
    assert s.cli("source-file", str(conf)).stderr == ""
    term = attached(outer, s, "c")
    term.type("echo alpha; echo be$((6*7)); echo omega", enter=True)
    term.wait_for("\nomega\n")

    def copied(text: str) -> None:
        wait_until(lambda: s.cli("show-buffer").stdout == text, timeout=30, message=f"buffer {text!r}")

    # Enter copy mode (C-b [), up two rows (k is unbound: does nothing), select the line, copy.
    term.keys("C-b", "[", "k", "Up", "Up", "0", "v", "$", "y")
    copied("be42")
    term.keys("C-b", "[", "Up", "0", "i", "$", "Y")
    copied("omega")
    wait_until(lambda: piped.exists() and piped.read_text() == "omega", timeout=30, message="copy-pipe's file")
    term.keys("C-b", "[", "t", "j", "0", "v", "$", "y")  # t: the view's top line, the command; j: alpha
    copied("alpha")
    term.keys("C-b", "[", "q")  # out: keys go to the shell again
    term.type("echo left-$((2*3))", enter=True)
    term.wait_for("\nleft-6\n")
    # The prompt reads tmux's if-shell and run (run-shell: its output a message, no window).
    term.keys("C-b", ":")
    term.type("if-shell 'test -d /' 'set -g @from-prompt yes'", enter=True)
    wait_until(lambda: s.cli("show-options", "-gqv", "@from-prompt").stdout == "yes\n", timeout=30,
               message="if-shell typed at the prompt")
    term.keys("C-b", ":")
    term.type("run 'echo said-$((6*7))'", enter=True)
    term.wait_for("said-42")
    assert s.cli("list-windows", "-a", "-F", "#{window_id}", check=True).stdout.split() == ["@0"]
