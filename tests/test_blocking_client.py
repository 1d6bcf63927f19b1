"""The blocking client of one-shot CLI commands against a daemon that misbehaves: whatever the
socket says (or does not), `muxd` ends with one clear line, never a traceback."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator

import msgspec
import pytest

from muxd.client.blocking import BlockingClient
from muxd.config import MAX_FRAME_BYTES, PROTOCOL_VERSION
from muxd.errors import NotFound
from muxd.protocol.bodies import encode
from muxd.protocol.framing import FrameDecoder, frame, header
from muxd.protocol.pane_messages import Captured, Error, Ok, PaneList, Welcome
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer

Behaviour = Callable[[socket.socket, "Requests"], None]  # what the fake daemon does after greeting


class Requests:
    """The requests a fake daemon reads from one connection, decoded as their id and type."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._frames = FrameDecoder()
        self._bodies: list[bytes] = []

    def next(self) -> dict:
        while not self._bodies:
            data = self._conn.recv(65536)
            if not data:
                raise ConnectionError("the client left")
            self._bodies += self._frames.feed(data)
        return msgspec.msgpack.decode(self._bodies.pop(0))


@pytest.fixture
def fake_daemon(muxd_unstarted: MuxdTestServer) -> Iterator[Callable[[Behaviour], MuxdTestServer]]:
    """Listens where the daemon of `muxd_unstarted` would; greets one client, then does `behaviour`."""
    threads: list[threading.Thread] = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def start(behaviour: Behaviour) -> MuxdTestServer:
        listener.bind(str(muxd_unstarted.socket_path))
        listener.listen(1)

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                requests = Requests(conn)
                hello = requests.next()
                assert hello["type"] == "hello"
                conn.sendall(encode(Welcome(id=hello["id"], protocol_version=PROTOCOL_VERSION,
                                            server_version="fake", principal="system", pid=os.getpid())))
                try:
                    behaviour(conn, requests)
                except ConnectionError:
                    pass

        threads.append(threading.Thread(target=serve, daemon=True))
        threads[-1].start()
        return muxd_unstarted

    yield start
    listener.close()
    for thread in threads:
        thread.join(timeout=stretched(5))


def _answer_with(body: bytes) -> Behaviour:
    def behaviour(conn: socket.socket, requests: Requests) -> None:
        requests.next()
        conn.sendall(body)

    return behaviour


def _vanish(conn: socket.socket, requests: Requests) -> None:
    requests.next()  # then close without a word, as a daemon that died


def _wrong_reply(conn: socket.socket, requests: Requests) -> None:
    conn.sendall(encode(Captured(id=requests.next()["id"], text="not a pane list")))


@pytest.mark.parametrize(("behaviour", "says"), [
    (_answer_with(frame(b"\xc1")), "muxd: malformed message from server: "),
    (_answer_with(header(MAX_FRAME_BYTES + 1)), f"muxd: frame announces {MAX_FRAME_BYTES + 1} bytes"),
    (_wrong_reply, "muxd: malformed message from server: "),
    (_vanish, "muxd: the server closed the connection"),
    (_answer_with(encode(Error(id=0, code="internal", message="shutting down"))), "muxd: shutting down"),
], ids=["undecodable", "oversized", "wrong-reply", "vanished", "connection-error"])
def test_a_misbehaving_daemon_gets_one_line(fake_daemon, behaviour, says):
    server = fake_daemon(behaviour)
    result = server.cli("ls")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(says), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_no_daemon_is_one_line_and_ls_starts_none(muxd_unstarted):
    result = muxd_unstarted.cli("ls")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"muxd: no server running on {muxd_unstarted.socket_path}\n"
    assert not muxd_unstarted.socket_path.exists()


def test_replies_split_across_reads_or_read_early_each_reach_their_call(fake_daemon):
    def behaviour(conn: socket.socket, requests: Requests) -> None:
        asked = requests.next()["id"]
        # The reply to this request and, read along with it, the reply to the next one.
        data = encode(Ok(id=asked)) + encode(PaneList(id=asked + 1, panes=[]))
        conn.sendall(data[:3])  # not even a whole header
        conn.sendall(data[3:])
        requests.next()
        conn.sendall(encode(Error(id=requests.next()["id"], code="not_found", message="can't find pane: %9")))

    server = fake_daemon(behaviour)
    with BlockingClient.connect(server.socket_path) as client:
        assert client.welcome is not None and client.welcome.server_version == "fake"
        assert client.call("list-panes", "ok").type == "ok"
        assert client.call("list-panes", "pane-list").panes == []
        with pytest.raises(NotFound, match="can't find pane"):
            client.call("list-panes", "pane-list")


def test_a_daemon_closing_before_the_welcome_reads_as_not_running(muxd_unstarted):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(muxd_unstarted.socket_path))
    listener.listen(1)
    try:
        def accept_and_close() -> None:
            conn, _ = listener.accept()
            conn.close()

        thread = threading.Thread(target=accept_and_close, daemon=True)
        thread.start()
        result = muxd_unstarted.cli("has-session")
        thread.join(timeout=stretched(5))
    finally:
        listener.close()
    assert result.returncode == 1
    assert result.stderr == f"muxd: no server running on {muxd_unstarted.socket_path} (the connection was reset)\n"


def test_requests_sent_ahead_leave_with_the_hello_and_their_replies_wait_for_their_calls(fake_daemon):
    """greet_later and send_ahead: one write carries Hello and three requests; the daemon may
    answer in any order; an error sent ahead is raised by the call that asks for it, not before."""
    seen: list[list[str]] = []

    def behaviour(conn: socket.socket, requests: Requests) -> None:
        asked = [requests.next() for _ in range(3)]
        seen.append([request["type"] for request in asked])
        ids = {request["type"]: request["id"] for request in asked}
        conn.sendall(encode(Ok(id=ids["has-session"])) + encode(Error(id=ids["kill-pane"], code="not_found",
                                                                       message="can't find pane: %9"))
                     + encode(PaneList(id=ids["list-panes"], panes=[])))

    server = fake_daemon(behaviour)
    with BlockingClient.connect(server.socket_path, greet_later=True) as client:
        writes: list[bytes] = []
        sock = client._sock

        class Recording:
            def sendall(self, data: bytes) -> None:
                writes.append(data)
                sock.sendall(data)

            def __getattr__(self, name: str) -> object:
                return getattr(sock, name)

        client._sock = Recording()
        client.send_ahead("list-panes", all=True)
        client.send_ahead("kill-pane", target="%9")
        assert client.call("has-session", "ok").type == "ok"
        assert len(writes) == 1
        assert [msgspec.msgpack.decode(body)["type"] for body in FrameDecoder().feed(writes[0])] == [
            "hello", "list-panes", "kill-pane", "has-session"]
        assert client.welcome is not None and client.welcome.server_version == "fake"
        assert client.call("list-panes", "pane-list", all=True).panes == []
        with pytest.raises(NotFound, match="can't find pane"):
            client.call("kill-pane", "ok", target="%9")
        assert len(writes) == 1  # every answer was already there
    assert seen == [["list-panes", "kill-pane", "has-session"]]
