"""The CLI's input errors are one line, never a traceback: files that cannot be read, mistyped
commands and flags, a reader that leaves early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.cli._closed_pipe import CLOSED_PIPE_STATUS
from muxd.cli.main import main
from muxd.cli.table import CLI_COMMANDS
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer


@pytest.mark.parametrize("command", ["detect", "replay"])
def test_a_file_that_cannot_be_read_is_one_line(muxd_unstarted: MuxdTestServer, tmp_path: Path, command: str) -> None:
    for target, says in ((tmp_path / "missing.bin", "No such file or directory"), (tmp_path, "a directory, not a file")):
        result = muxd_unstarted.cli(command, str(target))
        assert result.returncode == 1
        assert result.stderr == f"muxd: {target}: {says}\n"


def test_detect_reads_standard_input(muxd_unstarted: MuxdTestServer) -> None:
    result = muxd_unstarted.cli("detect", "-", "--json", input="user@host:~$ \n")
    assert result.returncode == 0, result.stderr
    assert '"agent_type"' in result.stdout


@pytest.mark.parametrize(("typed", "hint"), [
    ("lss", "unknown command 'lss' (did you mean 'ls'"),
    ("new-sesion", "unknown command 'new-sesion' (did you mean 'new-session'"),
    ("zzzz", "unknown command 'zzzz'; `muxd --help` lists them"),
])
def test_a_mistyped_command_gets_did_you_mean(muxd_unstarted: MuxdTestServer, typed: str, hint: str) -> None:
    result = muxd_unstarted.cli(typed)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("usage: muxd")
    assert f"muxd: error: {hint}" in result.stderr
    assert "choose from" not in result.stderr  # not the list of every command and alias


TMUX_DASH_H = ("split-window", "join-pane")  # tmux's -h there: side by side; --help is the help


@pytest.mark.parametrize("command", [c.name for c in CLI_COMMANDS])
def test_dash_h_is_help_on_every_command(command: str, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MUXD_SOCKET_DIR", str(tmp_path))  # whatever happens, never the user's server
    with pytest.raises(SystemExit) as exited:
        main([command, "--help" if command in TMUX_DASH_H else "-h"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: muxd {command} ")


@pytest.mark.parametrize(("args", "says"), [
    (["ls", "--jsn"], "muxd ls: error: unrecognized arguments: --jsn (did you mean --json?)"),
    (["capture-pane", "-Z"], "muxd capture-pane: error: unrecognized arguments: -Z\n"),
    (["task", "ls", "--sate", "done"], "muxd task ls: error: unrecognized arguments: --sate done (did you mean --state or --host?)"),
])
def test_a_mistyped_flag_gets_the_commands_usage(args: list[str], says: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: muxd {' '.join(args[:2] if args[0] == 'task' else args[:1])} ")
    assert says in err


@pytest.mark.parametrize("command", [["ls"], ["capture-pane", "-p", "-t", "%0"], ["list-panes", "--json"],
                                     ["tmux", "show-options", "-g"]])  # `-L NAME` goes after `tmux`
def test_a_closed_pipe_ends_quietly(muxd_server: MuxdTestServer, command: list[str]) -> None:
    """`muxd ls | head -1`: the reader is gone before muxd writes; no traceback, SIGPIPE's status."""
    muxd_server.cli("new-session", "-d", "--", "sleep", "600", check=True)
    if command[0] == "tmux":
        command = ["tmux", "-L", muxd_server.name, *command[1:]]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        server = [] if command[0] == "tmux" else ["-L", muxd_server.name]
        result = subprocess.run([sys.executable, "-m", "muxd", *server, *command],
                                env=muxd_server.env, stdout=write_end, stderr=subprocess.PIPE, timeout=stretched(20))
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (CLOSED_PIPE_STATUS, b"")
