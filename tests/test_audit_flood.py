"""A flood of `record-call`s from a view_only token: the audit queue is bounded, so the daemon's
memory stays small (120k calls used to add ~230 MB before the writer caught up), every other
client is answered meanwhile, and every row the flood recorded is stored."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from contextlib import closing

from test_bad_input import RawPeer

from muxd.config import PROTOCOL_VERSION
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Error, GetToolHistory, Hello, RecordCall, ServerStatus, Status
from muxd.testing.patience import Deadline, stretched
from muxd.testing.proc import peak_rss_kib
from muxd.testing.server import MuxdTestServer

FLOOD_CALLS = 60_000
FRAMES_PER_SEND = 1000
RSS_GROWTH_MAX_MIB = 40  # the queue's rows and the socket buffers; it was ~115 MB for 60k calls
FLOOD_TIMEOUT_S = 120.0
STATUS_ANSWER_MAX_S = 5.0


def test_a_flood_of_record_calls_keeps_the_daemon_small_and_serving(muxd_server: MuxdTestServer) -> None:
    server = muxd_server
    assert server.pid is not None
    secret = server.cli("token", "create", "--tier", "view_only", "--name", "flood", check=True).stdout.strip()
    observer = RawPeer(server.socket_path)
    observer.hello()
    observer.send(encode(ServerStatus(id=2)))
    assert isinstance(observer.receive(), Status)  # the daemon's usual peak is behind it
    before_kib = peak_rss_kib(server.pid)

    flood = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    flood.connect(str(server.socket_path))
    flood.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="flood", token=secret)))
    answered: list[object] = []
    errors: list[Error] = []

    def read() -> None:
        decoder = FrameDecoder()
        while len(answered) < FLOOD_CALLS + 1:
            data = flood.recv(1 << 20)
            if not data:
                return
            for body in decoder.feed(data):
                reply = decode_server_message(body)
                answered.append(reply)
                if isinstance(reply, Error):
                    errors.append(reply)

    def send() -> None:
        for start in range(0, FLOOD_CALLS, FRAMES_PER_SEND):
            flood.sendall(b"".join(
                encode(RecordCall(id=n + 2, tool="list_panes", args_sha256="0" * 64, status="ok", rows=n,
                                  latency_ms=1.0)) for n in range(start, start + FRAMES_PER_SEND)))

    threads = [threading.Thread(target=read, daemon=True), threading.Thread(target=send, daemon=True)]
    for thread in threads:
        thread.start()
    slowest = 0.0
    asked = 0
    deadline = Deadline(FLOOD_TIMEOUT_S)
    while len(answered) < FLOOD_CALLS + 1 and not deadline.expired():  # another client, meanwhile
        began = time.monotonic()
        asked += 1
        observer.send(encode(ServerStatus(id=2 + asked)))
        status = observer.receive()
        assert isinstance(status, Status) and status.id == 2 + asked, status
        slowest = max(slowest, time.monotonic() - began)
    for thread in threads:
        thread.join(timeout=stretched(FLOOD_TIMEOUT_S))
    flood.close()
    assert len(answered) == FLOOD_CALLS + 1 and not errors, errors[:3]
    grown_mib = (peak_rss_kib(server.pid) - before_kib) / 1024
    assert grown_mib < RSS_GROWTH_MAX_MIB, grown_mib
    assert asked >= 1 and slowest < stretched(STATUS_ANSWER_MAX_S), (asked, slowest)

    # Nothing the flood recorded was lost: a history read waits for the queue, then every row is there.
    observer.send(encode(GetToolHistory(id=1, tool="list_panes", limit=1)))
    assert [row.rows for row in observer.receive().rows] == [FLOOD_CALLS - 1]
    with closing(sqlite3.connect(f"file:{server.env['MUXD_DB']}?mode=ro", uri=True)) as db:
        stored = db.execute("SELECT count(*) FROM audit WHERE principal = 'token:flood'").fetchone()[0]
    assert stored == FLOOD_CALLS
    observer.send(encode(ServerStatus(id=9)))
    status = observer.receive()
    assert (status.audit_rows_dropped, status.audit_rows_failed) == (0, 0)
    observer.close()
