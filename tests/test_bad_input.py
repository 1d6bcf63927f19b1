"""Every kind of bad input gets a clear, typed error, and the daemon keeps serving everyone."""

import asyncio
import json
import os
import signal
import socket
import struct
import subprocess
import sys

import msgspec
import pytest

from muxd.config import PROTOCOL_VERSION, SEND_KEYS_MAX_COUNT
from muxd.errors import ServerNotRunning, VersionMismatch
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Error, GetToolHistory, Hello, ListPanes, PaneList, Welcome
from muxd.testing.hostile_msgpack import Nested, RawStr, Repeated, pack
from muxd.testing.patience import stretched
from muxd.testing.proc import peak_rss_kib, tracebacks_in
from muxd.testing.proc import rss_kib
from muxd.testing.wait import wait_until

READ_TIMEOUT_S = 10


class RawPeer:
    """A hand-driven socket peer: send any bytes, read whatever frames come back."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(stretched(READ_TIMEOUT_S))
        self.sock.connect(str(path))
        self.decoder = FrameDecoder()
        self.pending = []

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def hello(self) -> Welcome:
        self.send(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="raw")))
        reply = self.receive()
        assert isinstance(reply, Welcome), reply
        return reply

    def receive(self):
        """The next message, or None once the server has closed the connection."""
        while not self.pending:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.pending += [decode_server_message(b) for b in self.decoder.feed(data)]
        return self.pending.pop(0)

    def close(self):
        self.sock.close()


def still_serves(server):
    """Another client is served normally: the daemon survived what came before."""
    peer = RawPeer(server.socket_path)
    try:
        peer.hello()
        peer.send(encode(ListPanes(id=2, all=True)))
        reply = peer.receive()
        return isinstance(reply, PaneList) and reply.id == 2
    finally:
        peer.close()


@pytest.fixture
def server(muxd_server):
    muxd_server.cli("new-session", "-d", "-s", "s", "--", "sleep", "600", check=True)
    return muxd_server


def test_garbage_bytes(server):
    peer = RawPeer(server.socket_path)
    peer.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.code == "bad_request"
    assert "frame announces" in reply.message
    assert peer.receive() is None  # the stream cannot be trusted after garbage: closed
    assert still_serves(server)


def test_small_garbage_frame(server):
    peer = RawPeer(server.socket_path)
    peer.send(struct.pack(">I", 3) + b"\xc1\xc1\xc1")
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.code == "bad_request"
    assert "malformed" in reply.message
    assert still_serves(server)


def test_frame_announcing_4_gib(server):
    peer = RawPeer(server.socket_path)
    peer.send(struct.pack(">I", 0xFFFFFFFF))
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.code == "bad_request"
    assert str(0xFFFFFFFF) in reply.message
    assert peer.receive() is None
    assert still_serves(server)
    assert rss_kib(server.pid) < 1024 * 1024  # nothing near 4 GiB was ever allocated


def test_valid_frame_of_unknown_type_keeps_the_connection(server):
    peer = RawPeer(server.socket_path)
    peer.hello()
    body = msgspec.msgpack.encode({"type": "teleport", "id": 41})
    peer.send(struct.pack(">I", len(body)) + body)
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.id == 41 and reply.code == "bad_request"
    assert "unknown request type 'teleport'" in reply.message
    peer.send(encode(ListPanes(id=42, all=True)))  # the same connection still works
    reply = peer.receive()
    assert isinstance(reply, PaneList) and reply.id == 42 and len(reply.panes) == 1


def test_request_before_hello(server):
    peer = RawPeer(server.socket_path)
    peer.send(encode(ListPanes(id=5)))
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.id == 5 and "first message must be hello" in reply.message
    assert peer.receive() is None
    assert still_serves(server)


def test_wrong_protocol_version(server):
    peer = RawPeer(server.socket_path)
    peer.send(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION + 99)))
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.code == "version_mismatch"
    assert f"speaks {PROTOCOL_VERSION}" in reply.message
    assert still_serves(server)


def test_wrong_protocol_version_through_the_client(server, monkeypatch):
    from muxd.client import connection

    monkeypatch.setattr(connection, "PROTOCOL_VERSION", PROTOCOL_VERSION + 1)

    async def attempt():
        await connection.Client.connect(server.socket_path)

    with pytest.raises(VersionMismatch):
        asyncio.run(attempt())


def test_unknown_target(server):
    result = server.cli("capture-pane", "-p", "-t", "nosuch")
    assert result.returncode == 1
    assert result.stderr.strip() == "muxd: can't find session: nosuch"
    assert still_serves(server)


MALFORMED_TARGETS = ("%x", "%-1", "%", "%%", "@x", "@", "$x", "$", "%x:1.2", "@x.1", "$x:y.z", ":", "::", ".", "s:%x")


def test_malformed_targets_are_not_found_and_cost_no_log(server):
    """`%x` used to recurse until RecursionError: an `internal` reply and a traceback per call."""
    from muxd.protocol.messages import CapturePane, KillPane, KillWindow, Summary

    log_before = server.log_path.stat().st_size
    peer = RawPeer(server.socket_path)
    try:
        peer.hello()
        request_id = 10
        for _ in range(20):
            for target in MALFORMED_TARGETS:
                for kind in (CapturePane, Summary, KillPane, KillWindow):
                    request_id += 1
                    peer.send(encode(kind(id=request_id, target=target)))
                    reply = peer.receive()
                    assert isinstance(reply, Error) and reply.id == request_id, reply
                    assert reply.code == "not_found", (target, kind.__name__, reply)
    finally:
        peer.close()
    assert still_serves(server)
    log = server.log_path.read_text()
    assert "Traceback" not in log and "RecursionError" not in log
    assert server.log_path.stat().st_size - log_before < 2048  # 1200 refusals, no log line each


def test_command_that_cannot_be_spawned(server):
    for command, message in ((["no-such-program-xyz"], "no-such-program-xyz: command not found"),
                             (["/etc/passwd"], "/etc/passwd: not an executable file"),
                             (["/no/where"], "/no/where: no such file")):
        result = server.cli("new-session", "-d", "-s", "broken", "--", *command)
        assert result.returncode == 1 and message in result.stderr, result.stderr
        assert server.cli("has-session", "-t", "broken").returncode == 1  # nothing half-made left
    result = server.cli("split-window", "-t", "s", "--", "no-such-program-xyz")
    assert result.returncode == 1 and "command not found" in result.stderr
    panes = json.loads(server.cli("list-panes", "-a", "--json", check=True).stdout)
    assert [p["id"] for p in panes] == ["%0"] and panes[0]["height"] == 24  # the target is untouched
    assert still_serves(server)


def test_client_that_disconnects_mid_request(server):
    for _ in range(5):
        peer = RawPeer(server.socket_path)
        peer.hello()
        # a request that takes a moment (spawns a process), then vanish before the reply
        from muxd.protocol.messages import NewWindow, Spawn
        peer.send(encode(NewWindow(id=9, target="s", spawn=Spawn(command=["sleep", "600"]))))
        peer.sock.shutdown(socket.SHUT_RDWR)
        peer.close()
    half = RawPeer(server.socket_path)
    half.send(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION))[:7])  # half a frame, then gone
    half.close()
    assert still_serves(server)
    wait_until(lambda: len(json.loads(server.cli("list-panes", "--json").stdout)) == 6,
               message="the abandoned requests still completed")


def test_second_daemon_on_the_same_socket_is_refused(server):
    before = os.stat(server.socket_path).st_ino
    result = subprocess.run([sys.executable, "-m", "muxd.daemon.main", "--name", server.name],
                            env=server.env, capture_output=True, text=True, timeout=stretched(30))
    assert result.returncode == 1
    assert "already running" in result.stderr
    assert os.stat(server.socket_path).st_ino == before  # not clobbered
    assert still_serves(server)
    assert server.cli("start-server").returncode == 0  # start-server on a live server is a no-op


def test_stale_socket_from_a_killed_daemon_is_replaced(server):
    os.kill(server.pid, signal.SIGKILL)
    wait_until(lambda: not server.running(), message="daemon killed")
    assert server.socket_path.exists()  # left behind
    with pytest.raises(ServerNotRunning):
        asyncio.run(server.client())
    server.cli("new-session", "-d", "-s", "again", "--", "sleep", "600", check=True)
    server.pid = json.loads(server.cli("server", "status", "--json", check=True).stdout)["pid"]
    assert still_serves(server)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another uid")
def test_connection_from_another_uid_is_refused(server):
    # Open the way deliberately so that only the peer-credential check stands between them.
    os.chmod(server.socket_dir, 0o755)
    os.chmod(server.socket_path, 0o777)
    read_fd, write_fd = os.pipe()
    child = os.fork()
    if child == 0:  # the child becomes "nobody" and knocks
        try:
            os.close(read_fd)
            os.setgid(65534)
            os.setuid(65534)
            peer = RawPeer(server.socket_path)
            try:
                peer.send(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION)))
            except BrokenPipeError:
                pass  # the server may refuse before we even speak; its reason is still there to read
            reply = peer.receive()
            os.write(write_fd, f"{reply.code} {reply.message}".encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        answer = pipe.read()
    os.waitpid(child, 0)
    assert answer.startswith("forbidden connection from uid 65534 refused"), answer
    assert still_serves(server)


def _framed(message) -> bytes:
    body = pack(message)
    return struct.pack(">I", len(body)) + body


def test_undecodable_bodies_get_a_typed_error_by_id_and_the_connection_goes_on(server):
    """Invalid UTF-8 in a string and deep nesting used to escape the decoder: the connection
    dropped with a traceback in the log."""
    peer = RawPeer(server.socket_path)
    peer.hello()
    hostile = [{"type": "list-panes", "id": 50, "target": RawStr(b"s\xff")},
               {"type": RawStr(b"list-\xc3\x28panes"), "id": 51},
               {"type": "list-panes", "id": 52, "extra": Nested(50_000)},
               {"type": "send-keys", "id": 53, "target": "s", "keys": Repeated("ab", 200_000)}]
    peer.send(b"".join(_framed(m) for m in hostile) + encode(ListPanes(id=54, all=True)))
    replies = [peer.receive() for _ in range(5)]
    assert [(type(r).__name__, r.id) for r in replies] == [("Error", 50), ("Error", 51), ("Error", 0),
                                                            ("Error", 53), ("PaneList", 54)]
    assert all(r.code == "bad_request" for r in replies[:4])
    assert "not valid UTF-8" in replies[0].message and "nested too deeply" in replies[2].message
    assert f"length <= {SEND_KEYS_MAX_COUNT}" in replies[3].message
    assert still_serves(server)
    assert tracebacks_in(server.log_path.read_text()) == 0


def test_five_million_keys_are_refused_before_the_daemon_builds_them(server):
    """One 14 MB frame of 5 M two-character keys raised the daemon's RSS by ~389 MB before refusal."""
    peer = RawPeer(server.socket_path)
    peer.hello()
    assert still_serves(server)  # the daemon's usual peak is behind it
    before_kib = peak_rss_kib(server.pid)
    body = pack({"type": "send-keys", "id": 60, "target": "s", "keys": Repeated("ab", 5_000_000)})
    assert len(body) > 14_000_000
    peer.send(struct.pack(">I", len(body)) + body)
    reply = peer.receive()
    assert isinstance(reply, Error) and reply.id == 60 and reply.code == "bad_request", reply
    grown_mib = (peak_rss_kib(server.pid) - before_kib) / 1024
    assert grown_mib < 120, grown_mib  # the frame's own bytes, a few times over; not hundreds of MB
    assert still_serves(server)


def test_frames_ahead_of_framing_damage_are_still_answered(server):
    peer = RawPeer(server.socket_path)
    peer.send(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION)) + encode(ListPanes(id=2, all=True))
              + struct.pack(">I", 0xFFFFFFFF))
    replies = [peer.receive() for _ in range(3)]
    assert isinstance(replies[0], Welcome) and isinstance(replies[1], PaneList) and replies[1].id == 2
    assert isinstance(replies[2], Error) and replies[2].id == 0 and str(0xFFFFFFFF) in replies[2].message
    assert peer.receive() is None
    assert still_serves(server)


def test_numbers_past_what_the_store_holds_are_bad_requests(server):
    """`record-call` with rows >= 2^63 was acknowledged and its audit row then failed to store; an
    offset past 2^63 failed the listing with an internal OverflowError."""
    peer = RawPeer(server.socket_path)
    peer.hello()
    call = {"type": "record-call", "tool": "list_panes", "args_sha256": "0" * 64, "status": "ok"}
    hostile = [{**call, "id": 70, "rows": 2**63}, {**call, "id": 71, "rows": 2**64 - 1},
               {**call, "id": 72, "latency_ms": 1e308}, {**call, "id": 73, "latency_ms": float("nan")},
               {**call, "id": 74, "rows": -1},
               {"type": "list-executions", "id": 75, "offset": 2**63},
               {"type": "list-tasks", "id": 76, "offset": 2**63}]
    peer.send(b"".join(_framed(m) for m in hostile) + _framed({**call, "id": 77, "rows": 3, "latency_ms": 2.5}))
    replies = {r.id: r for r in (peer.receive() for _ in range(len(hostile) + 1))}
    for message in hostile:
        reply = replies[message["id"]]
        assert isinstance(reply, Error) and reply.code == "bad_request", reply
        assert "\n" not in reply.message and "at `$." in reply.message, reply.message
    assert type(replies[77]).__name__ == "Ok"
    peer.send(encode(GetToolHistory(id=78, tool="list_panes")))
    history = peer.receive()
    assert [(row.rows, row.latency_ms) for row in history.rows] == [(3, 2.5)]  # the one in range, only
    assert still_serves(server)
    log = server.log_path.read_text()
    assert tracebacks_in(log) == 0 and "OverflowError" not in log
