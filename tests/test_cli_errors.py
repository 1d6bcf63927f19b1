"""The CLI's input errors are one line, never a traceback: files that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

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
