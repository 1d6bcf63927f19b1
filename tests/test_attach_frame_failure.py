"""A real daemon whose frames fail: a client's frame that raises is tried again (the whole
screen repainted), failures count only in a row, and ATTACH_RENDER_FAILURES_MAX in a row detach
that client with its one-line reason while the daemon goes on serving. The fault is injected
into the daemon process (a sitecustomize on its PYTHONPATH makes compose raise while a file
says how many frames are still to fail), so nothing in muxd carries a test hook."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

from muxd.config import ATTACH_RENDER_FAILURES_MAX, PROTOCOL_VERSION
from muxd.emulator.backend import new_emulator
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Attach, Attached, AttachOutput, Detached, Hello
from muxd.testing.patience import Deadline, stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

FAILS_ENV = "MUXD_TEST_FRAMES_TO_FAIL"
_FAIL_FRAMES = f"""
import importlib, os

_module = importlib.import_module("muxd.attach.compose")  # the module: the package's name is the function
_compose = _module.compose


def compose(*args, **kwargs):
    path = os.environ[{FAILS_ENV!r}]
    left = int(open(path).read() or 0) if os.path.exists(path) else 0
    if left:
        with open(path, "w") as f:
            f.write(str(left - 1))
        raise RuntimeError("injected frame fault")
    return _compose(*args, **kwargs)


_module.compose = compose
"""
INTERNAL_ERROR = "internal error in the muxd server (see its log)"


def _server(tmp_path: Path) -> tuple[MuxdTestServer, Path]:
    (tmp_path / "sitecustomize.py").write_text(_FAIL_FRAMES)
    fails = tmp_path / "frames_to_fail"
    pythonpath = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    return MuxdTestServer(env={"PYTHONPATH": pythonpath, FAILS_ENV: str(fails)}).start(), fails


def _messages(link: socket.socket, deadline: Deadline) -> Iterator[object]:
    decoder = FrameDecoder()
    while not deadline.expired():
        chunk = link.recv(1 << 20)
        assert chunk, "the daemon closed the connection"
        yield from map(decode_server_message, decoder.feed(chunk))
    raise AssertionError(f"no such message: {deadline.describe()}")


def _attach(server: MuxdTestServer, session: str) -> socket.socket:
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    link.settimeout(stretched(10))
    link.connect(str(server.socket_path))
    link.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="test"))
                 + encode(Attach(id=2, target=session, columns=60, lines=10)))
    return link


def _until_shown(link: socket.socket, text: str) -> None:
    """Read frames into a terminal until it shows `text`; a Detached on the way fails."""
    terminal = new_emulator(60, 10, backend="pyte")
    for message in _messages(link, Deadline(20)):
        assert not isinstance(message, Detached), message
        if isinstance(message, AttachOutput):
            terminal.feed(message.data)
            if text in "\n".join(terminal.display_lines()):
                return


def test_failed_frames_are_tried_again_and_only_failures_in_a_row_count(tmp_path: Path) -> None:
    s, fails = _server(tmp_path)
    try:
        s.cli("new-session", "-d", "-s", "work", "--", "sh", "-c", "echo FIRST; read x; echo GOT-$x; exec sleep 600",
              check=True)
        s.wait_for_text("work", "FIRST")
        fails.write_text(str(ATTACH_RENDER_FAILURES_MAX - 1))
        with _attach(s, "work") as link:
            _until_shown(link, "FIRST")  # after the failed frames, a frame repainted it all
            assert fails.read_text() == "0"
            fails.write_text(str(ATTACH_RENDER_FAILURES_MAX - 1))  # as many again: the count began anew
            s.cli("send-keys", "-t", "work", "again", "Enter", check=True)
            _until_shown(link, "GOT-again")
            assert fails.read_text() == "0"
        wait_until(lambda: "render failed (2 in a row)" in s.log_path.read_text(), timeout=10,
                   message="the failed frames logged")
        log = s.log_path.read_text()
        assert log.count(f"render failed ({ATTACH_RENDER_FAILURES_MAX} in a row)") == 0, log[-3000:]
        assert log.count("RuntimeError: injected frame fault") == 2 * (ATTACH_RENDER_FAILURES_MAX - 1), log[-3000:]
    finally:
        s.stop()


def test_failures_in_a_row_detach_the_client_with_one_line_and_the_daemon_serves_on(tmp_path: Path) -> None:
    s, fails = _server(tmp_path)
    try:
        s.cli("new-session", "-d", "-s", "work", "--", "sh", "-c", "echo FIRST; exec sleep 600", check=True)
        s.wait_for_text("work", "FIRST")
        fails.write_text("1000")
        with _attach(s, "work") as link:
            replies = []
            for message in _messages(link, Deadline(20)):
                assert not isinstance(message, AttachOutput) or b"FIRST" not in message.data
                replies.append(message)
                if isinstance(message, Detached):
                    break
        assert any(isinstance(m, Attached) for m in replies), replies
        assert replies[-1] == Detached(reason=INTERNAL_ERROR), replies[-1]
        assert int(fails.read_text()) == 1000 - ATTACH_RENDER_FAILURES_MAX  # no frame tried after
        assert "work" in s.cli("ls", check=True).stdout
        fails.write_text("0")
        with _attach(s, "work") as link:  # the next client draws as ever
            _until_shown(link, "FIRST")
        log = s.log_path.read_text()
        assert f"render failed ({ATTACH_RENDER_FAILURES_MAX} in a row)" in log, log[-3000:]
    finally:
        s.stop()
