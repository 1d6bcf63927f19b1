"""Arguments that are not UTF-8 (the shell's $'caf\\xe9') through the real CLI and a real daemon:
bytes tmux passes through reach the pane as they were typed; a word that must be text (a name,
a title, a search) is refused in one line, without a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from muxd.testing.server import CLI_TIMEOUT_S, MuxdTestServer
from muxd.testing.wait import wait_until


def muxd(server: MuxdTestServer, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    """`muxd -L NAME args…` with argv given as bytes, as a shell passes $'\\xe9'."""
    return subprocess.run([sys.executable.encode(), b"-m", b"muxd", b"-L", server.name.encode(), *args],
                          env=server.env, capture_output=True, timeout=CLI_TIMEOUT_S)


@pytest.mark.parametrize(("args", "said"), [
    ((b"new-session", b"-d", b"-s", b"\xff"), "muxd: name '\\xff' is not valid UTF-8"),
    ((b"rename-window", b"caf\xe9"), "muxd: name 'caf\\xe9' is not valid UTF-8"),
    ((b"task", b"add", b"fix caf\xe9"), "muxd: title 'fix caf\\xe9' is not valid UTF-8"),
    ((b"knowledge", b"search", b"caf\xe9"), "muxd: query 'caf\\xe9' is not valid UTF-8"),
    ((b"tmux", b"new-session", b"-d", b"-s", b"\xff"), "name '\\xff' is not valid UTF-8"),
])
def test_a_name_that_is_not_utf8_is_refused_in_one_line(muxd_module_server, args, said):
    out = muxd(muxd_module_server, *args)
    assert out.returncode == 1, out
    assert out.stderr.decode().strip() == said and b"Traceback" not in out.stderr
    # The daemon made nothing of it and keeps serving.
    sessions = muxd(muxd_module_server, b"ls", b"--sessions", b"-F", b"#{session_name}").stdout
    assert b"\xff" not in sessions and b"\\xff" not in sessions


def _pane(server: MuxdTestServer, session: bytes, *spawn: bytes) -> str:
    out = muxd(server, b"new-session", b"-d", b"-s", session, b"-P", *spawn)
    assert out.returncode == 0, out
    return out.stdout.decode().strip()


def test_a_pane_in_a_directory_that_is_not_utf8_is_listed_as_the_shell_shows_it(muxd_module_server, tmp_path):
    (tmp_path / "caf\udce9").mkdir()  # the bytes caf\xe9, as Python names them
    pane = _pane(muxd_module_server, b"latin1-dir", b"--", b"bash", b"--norc", b"--noprofile")
    # Typed in ASCII: the shell itself goes there, as a user's `cd` would.
    muxd(muxd_module_server, b"send-keys", b"-t", pane.encode(), f"cd {tmp_path}/$'caf\\xe9'".encode(), b"Enter")
    wait_until(lambda: b"caf\\xe9" in muxd(muxd_module_server, b"list-panes", b"-a", b"-F",
                                             b"#{pane_id} #{pane_current_path}").stdout,
               timeout=10, message="the pane's directory listed")
    listed = muxd(muxd_module_server, b"list-panes", b"-a", b"-F", b"#{pane_id} #{pane_current_path}")
    assert f"{pane} {tmp_path}/caf\\xe9".encode() in listed.stdout.splitlines()
    assert muxd(muxd_module_server, b"ls").returncode == 0  # the table and the server too
