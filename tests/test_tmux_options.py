"""tmux's options muxd has no use for (muxd/cli/tmux_options.py): their defaults are tmux 3.3a's."""

import shutil
import subprocess
import uuid

import pytest

from muxd.cli.tmux_options import TMUX_DEFAULTS, format_defaults, tmux_only_option


def test_set_and_show_lines():
    assert tmux_only_option("set-option", ["-p", "-t", "%1", "window-style", "bg=default,fg=blue"]) == ""
    assert tmux_only_option("set-option", ["-wt", "@0", "pane-border-status", "top"]) == ""
    assert tmux_only_option("show-options", ["-gv", "focus-events"]) == "off\n"
    assert tmux_only_option("show-options", ["-g", "status-left"]) == 'status-left "[#{session_name}] "\n'
    assert tmux_only_option("set-option", ["-g", "remain-on-exit", "on"]) is None  # muxd's own option
    assert tmux_only_option("show-options", ["-g"]) is None
    assert format_defaults()["focus-events"] == "0" and format_defaults()["status-position"] == "bottom"


def test_defaults_are_tmuxs():
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"muxd-options-{uuid.uuid4().hex[:8]}"
    run = ["tmux", "-L", name, "-f", "/dev/null"]
    try:
        subprocess.run([*run, "new-session", "-d", "cat"], check=True, timeout=10)
        shown = "".join(subprocess.run([*run, "show-options", *scope], capture_output=True, text=True,
                                       check=True, timeout=10).stdout for scope in (["-g"], ["-gw"], ["-s"]))
    finally:
        subprocess.run([*run, "kill-server"], capture_output=True, check=False, timeout=10)
    theirs = {line.split(" ", 1)[0]: line for line in shown.splitlines()}
    ours = {option: tmux_only_option("show-options", ["-g", option]).rstrip("\n") for option in TMUX_DEFAULTS}
    assert ours == {option: theirs[option] for option in TMUX_DEFAULTS}
