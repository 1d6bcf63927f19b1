"""Arguments that are not UTF-8 (the shell's $'caf\\xe9') through the real CLI and a real daemon:
bytes tmux passes through reach the pane as they were typed; a word that must be text (a name,
a title, a search) is refused in one line, without a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from test_bad_input import RawPeer
from test_cli_buffers import READER, READY

from muxd.protocol.framing import frame
from muxd.protocol.msgpack_lite import pack
from muxd.testing.patience import stretched
from muxd.testing.server import CLI_TIMEOUT_S, MuxdTestServer
from muxd.testing.wait import wait_until


def muxd(server: MuxdTestServer, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    """`muxd -L NAME args…` with argv given as bytes, as a shell passes $'\\xe9'."""
    return subprocess.run([sys.executable.encode(), b"-m", b"muxd", b"-L", server.name.encode(), *args],
                          env=server.env, capture_output=True, timeout=stretched(CLI_TIMEOUT_S))


@pytest.mark.parametrize(("args", "said"), [
    ((b"new-session", b"-d", b"-s", b"\xff"), "muxd: name '\\xff' is not valid UTF-8"),
    ((b"rename-window", b"caf\xe9"), "muxd: name 'caf\\xe9' is not valid UTF-8"),
    ((b"task", b"add", b"fix caf\xe9"), "muxd: title 'fix caf\\xe9' is not valid UTF-8"),
    ((b"knowledge", b"search", b"caf\xe9"), "muxd: query 'caf\\xe9' is not valid UTF-8"),
    # An execution's command and directory are kept in the history's database, which holds text.
    ((b"run", b"--", b"echo", b"caf\xe9"), "muxd: command 'caf\\xe9' is not valid UTF-8"),
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


def _reader(server: MuxdTestServer, session: bytes) -> str:
    pane = _pane(server, session, b"--", sys.executable.encode(), b"-c", READER.format(mode="").encode())
    _wait_for(server, pane, READY)
    return pane


def _wait_for(server: MuxdTestServer, pane: str, text: str) -> None:
    wait_until(lambda: text in muxd(server, b"capture-pane", b"-p", b"-t", pane.encode()).stdout.decode(),
               timeout=10, message=f"{text!r} in {pane}")


def test_send_keys_and_the_tmux_shim_type_the_bytes_given(muxd_module_server):
    pane = _reader(muxd_module_server, b"typed-bytes")
    assert muxd(muxd_module_server, b"send-keys", b"-t", pane.encode(), b"caf\xe9", b"Enter").returncode == 0
    _wait_for(muxd_module_server, pane, "b'caf\\xe9\\r'")
    out = muxd(muxd_module_server, b"tmux", b"send-keys", b"-t", pane.encode(), b"-l", b"na\xefve")
    assert out.returncode == 0, out
    _wait_for(muxd_module_server, pane, "b'na\\xefve'")


def test_set_buffer_keeps_the_bytes_paste_buffer_types_them(muxd_module_server):
    pane = _reader(muxd_module_server, b"pasted-bytes")
    assert muxd(muxd_module_server, b"set-buffer", b"-b", b"latin1", b"d\xe9j\xe0").returncode == 0
    assert b'latin1: 4 bytes' in muxd(muxd_module_server, b"list-buffers").stdout
    assert muxd(muxd_module_server, b"paste-buffer", b"-b", b"latin1", b"-t", pane.encode()).returncode == 0
    _wait_for(muxd_module_server, pane, "b'd\\xe9j\\xe0'")


def test_a_new_pane_starts_in_the_directory_and_with_the_environment_given_as_bytes(muxd_module_server, tmp_path):
    (tmp_path / "caf\udce9").mkdir()
    show = "import os; print(repr(os.path.basename(os.getcwdb())), repr(os.environb[b'WORD'])); input()"
    pane = _pane(muxd_module_server, b"spawn-bytes", b"-c", bytes(tmp_path) + b"/caf\xe9", b"-e", b"WORD=na\xefve",
                 b"--", sys.executable.encode(), b"-c", show.encode())
    _wait_for(muxd_module_server, pane, "b'caf\\xe9' b'na\\xefve'")
    listed = muxd(muxd_module_server, b"list-panes", b"-a", b"-F", b"#{pane_id} #{pane_current_path}")
    assert listed.returncode == 0 and f"{pane} {tmp_path}/caf\\xe9".encode() in listed.stdout.splitlines()


def test_run_runs_in_a_directory_given_as_bytes(muxd_module_server, tmp_path):
    (tmp_path / "caf\udce9").mkdir()
    out = muxd(muxd_module_server, b"run", b"--wait", b"-c", bytes(tmp_path) + b"/caf\xe9", b"--",
               b"sh", b"-c", b"pwd > ../where")
    assert out.returncode == 0, out
    assert (tmp_path / "where").read_bytes() == bytes(tmp_path) + b"/caf\xe9\n"
    assert muxd(muxd_module_server, b"ls").returncode == 0


def test_a_peer_sending_other_extensions_or_bytes_where_text_is_wanted_gets_one_error_each(muxd_module_server):
    peer = RawPeer(muxd_module_server.socket_path)
    peer.hello()
    os_bytes = b"\xc7\x01\x01\xff"  # ext 8, one byte, type 1 (OS bytes): b'\xff'
    unknown = b"\xc7\x01\x07\xff"   # the same byte under an extension type muxd does not know
    for request_id, target in ((70, os_bytes), (71, unknown)):
        # A map of three: type, id and a target given as raw msgpack.
        body = b"\x83" + pack("type") + pack("kill-session") + pack("id") + pack(request_id) + pack("target") + target
        peer.send(frame(body))
    first, second = peer.receive(), peer.receive()
    assert (first.id, first.code, first.message) == (70, "bad_request", "target '\\xff' is not valid UTF-8")
    assert (second.id, second.code) == (71, "bad_request") and "got `ext`" in second.message
    assert muxd(muxd_module_server, b"ls").returncode == 0
