"""The config file: its syntax (pure), `source-file`, and the file a server loads when it starts
(`$XDG_CONFIG_HOME/muxd/muxd.conf`, or `muxd -f FILE`), bad lines reported with file:line while
the rest still loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from muxd.cli.config_file import CommandLine, command_lines
from muxd.paths import config_file
from muxd.testing.patience import wait_process
from muxd.testing.wait import wait_until

SHELL = "-- bash --norc --noprofile"


def test_lines_comments_continuations_quotes_and_separators():
    text = ("# a comment\n"
            "set -g status off   # trailing comment\n"
            "\n"
            "set -g default-command \\\n"
            "    'echo \"#not a comment\"; sleep 1'\n"
            "new -d -s a ; set -t a prefix C-a \\; rename-window -t a:0 \"two words\"\n"
            "set -g 'unclosed\n"
            "set -g base-index 1\n")
    assert command_lines(text) == [
        CommandLine(2, ["set", "-g", "status", "off"]),
        CommandLine(4, ["set", "-g", "default-command", 'echo "#not a comment"; sleep 1']),
        CommandLine(6, ["new", "-d", "-s", "a"]),
        CommandLine(6, ["set", "-t", "a", "prefix", "C-a"]),
        CommandLine(6, ["rename-window", "-t", "a:0", "two words"]),
        CommandLine(7, [], "syntax error: no closing quotation"),
        CommandLine(8, ["set", "-g", "base-index", "1"]),
    ]
    assert command_lines("set -g status off \\") == [CommandLine(1, ["set", "-g", "status", "off"])]


def test_where_the_config_file_is(monkeypatch, tmp_path):
    monkeypatch.delenv("MUXD_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_file() == (tmp_path / ".config" / "muxd" / "muxd.conf", False)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/etc/xdg-here")
    assert config_file() == (Path("/etc/xdg-here/muxd/muxd.conf"), False)
    monkeypatch.setenv("MUXD_CONFIG", "/srv/muxd.conf")  # what `muxd -f /srv/muxd.conf` sets
    assert config_file() == (Path("/srv/muxd.conf"), True)


def _start(server) -> str:
    """Start `server` as a user would; its stderr (the config's complaints)."""
    out = server.cli("start-server")
    assert out.returncode == 0, out.stderr
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    return out.stderr


def test_server_start_loads_the_config_and_reports_bad_lines(muxd_unstarted):
    s = muxd_unstarted
    del s.env["MUXD_CONFIG"]  # the test server's "-f /dev/null": here the default file is wanted
    s.env["XDG_CONFIG_HOME"] = str(s.socket_dir / "config")
    config = s.socket_dir / "config" / "muxd" / "muxd.conf"
    config.parent.mkdir(parents=True)
    config.write_text("set -g base-index 1\n"
                      "set -g foo bar\n"
                      "bindkey x kill-pane\n"
                      f"new-session -d -s from-config -n first {SHELL}\n"
                      "set -t from-config status off\n"
                      "bind r source-file ~/x.conf \\; display-message -p reloaded\n")
    stderr = _start(s)
    first, second = stderr.splitlines()
    assert first == f"muxd: {config}:2: invalid option: foo"
    assert second.startswith(f"muxd: {config}:3: unknown command 'bindkey' (did you mean ")
    assert s.run_here("list-keys", "r", check=True).stdout == (
        "bind-key    -T prefix r       source-file ~/x.conf \\; display-message -p reloaded\n")
    # Everything else loaded before the server said it was ready: the first command sees it.
    assert s.run_here("list-windows", "-t", "from-config", check=True).stdout.split("\n")[1].split()[:4] == [
        "from-config", "1*", "@0", "first"]
    assert s.run_here("show-options", "-t", "from-config", check=True).stdout == "status off\n"
    assert "Traceback" not in s.log_path.read_text()


def test_dash_f_names_the_config_of_a_server_started_now_and_a_missing_one_is_reported(muxd_unstarted, tmp_path):
    s = muxd_unstarted
    out = s.cli("-f", str(tmp_path / "missing.conf"), "new-session", "-d", "-s", "w", *SHELL.split())
    assert out.returncode == 0, out.stderr  # the server started (and made the session) all the same
    assert out.stderr == f"muxd: {tmp_path}/missing.conf: No such file or directory\n"
    s.pid = int((s.socket_dir / f"{s.name}.lock").read_text().strip())
    assert s.run_here("has-session", "-t", "w").returncode == 0


def test_source_file_runs_every_line_nested_files_check_only_and_quiet(muxd_server, tmp_path):
    s = muxd_server
    inner = tmp_path / "inner.conf"
    inner.write_text("set -g status off\nselect-window -t nowhere:5\n")
    outer = tmp_path / "outer.conf"
    outer.write_text(f"source-file {inner}\nset -g base-index 3\n")
    out = s.run_here("source-file", str(outer))
    assert out.returncode == 1
    assert out.stderr == f"muxd: {inner}:2: no sessions\n"
    assert s.run_here("show-options", "-gv", "status", check=True).stdout == "off\n"
    assert s.run_here("show-options", "-gv", "base-index", check=True).stdout == "3\n"
    checked = tmp_path / "check.conf"
    checked.write_text("set -g base-index 7\nset -g 'oops\n")
    out = s.run_here("source-file", "-n", str(checked))  # -n: syntax only, nothing runs
    assert out.returncode == 1 and out.stderr == f"muxd: {checked}:2: syntax error: no closing quotation\n"
    assert s.run_here("show-options", "-gv", "base-index", check=True).stdout == "3\n"
    assert s.run_here("source-file", "-q", str(tmp_path / "nope.conf")).returncode == 0
    out = s.run_here("source-file", str(tmp_path / "nope.conf"))
    assert out.returncode == 1 and out.stderr == f"muxd: {tmp_path}/nope.conf: No such file or directory\n"
    loop = tmp_path / "loop.conf"
    loop.write_text(f"source-file {loop}\n")
    out = s.run_here("source-file", str(loop))
    assert out.returncode == 1 and "too many nested files (more than 10)" in out.stderr
    assert out.stderr.count("\n") == 1


def test_a_foreground_server_prints_the_config_complaints_itself(muxd_unstarted, tmp_path):
    s = muxd_unstarted
    config = tmp_path / "fg.conf"
    config.write_text("set -g status nope\nset -g base-index 2\n")
    foreground = subprocess.Popen([sys.executable, "-m", "muxd", "-L", s.name, "-f", str(config), "start-server",
                                   "-f"], env=s.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: s.run_here("server", "status").returncode == 0, message="the foreground server answers")
        # Whenever a command came, it waited for the config (a client like any other) to load.
        assert s.run_here("show-options", "-gv", "base-index", check=True).stdout == "2\n"
        s.run_here("kill-server", check=True)
        assert wait_process(foreground, 30) == 0
    finally:
        if foreground.poll() is None:
            foreground.kill()
            foreground.wait()
    assert f"muxd: {config}:1: unknown value: nope\n" in foreground.stderr.read()
