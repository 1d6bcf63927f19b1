"""Arguments that are not UTF-8 (the shell's $'caf\\xe9') through the real CLI and a real daemon:
bytes tmux passes through reach the pane as they were typed; a word that must be text (a name,
a title, a search) is refused in one line, without a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from muxd.testing.server import CLI_TIMEOUT_S, MuxdTestServer


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
