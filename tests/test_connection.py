"""The daemon's side of a connection: backpressure on a client that does not read its replies."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from muxd.config import PROTOCOL_VERSION
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import CapturePane, Captured, Hello, ListPanes, PaneList, Welcome
from muxd.testing.patience import stretched
from muxd.testing.proc import peak_rss_kib
from muxd.testing.server import MuxdTestServer

PIPELINED_CAPTURES = 40
SCROLLBACK_BYTES = 8 * 1024 * 1024  # the history the reproduction had (MUXD_SCROLLBACK_BYTES)
# A 1000-column pane of full rows: its 8 MiB of scrollback captures in ~0.1 s as ~8 MB of text.
WIDE_FLOOD = ("sh", "-c", "yes $(printf %0999d 0) | head -n 9000; echo FLOOD-DONE; exec sleep 600")
READ_TIMEOUT_S = 30


def _link(path, *, receive_buffer_bytes: int | None = None) -> tuple[socket.socket, FrameDecoder]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if receive_buffer_bytes is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer_bytes)
    sock.settimeout(stretched(READ_TIMEOUT_S))
    sock.connect(str(path))
    decoder = FrameDecoder()
    sock.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="test")))
    assert isinstance(_receive(sock, decoder, 1)[0], Welcome)
    return sock, decoder


def _receive(sock: socket.socket, decoder: FrameDecoder, count: int) -> list[object]:
    messages: list[object] = []
    while len(messages) < count:
        data = sock.recv(1 << 20)
        assert data, "the daemon closed the connection"
        messages += [decode_server_message(body) for body in decoder.feed(data)]
    return messages


@pytest.fixture
def big_history_server() -> Iterator[MuxdTestServer]:
    server = MuxdTestServer(env={"MUXD_SCROLLBACK_BYTES": str(SCROLLBACK_BYTES)}).start()
    try:
        yield server
    finally:
        server.stop()


def test_a_client_pipelining_big_captures_without_reading_holds_one_reply(big_history_server):
    """40 `capture-pane -S -` of an 8 MiB scrollback, sent at once and not read, grew the daemon
    by one reply each (~340 MB here). Now it stops reading that client while its replies wait;
    the others are served; once it reads, every reply comes."""
    s = big_history_server
    s.cli("new-session", "-d", "-s", "big", "-x", "1000", "-y", "50", "--", *WIDE_FLOOD, check=True)
    s.wait_for_text("big", "FLOOD-DONE", timeout=30)
    reply_bytes = len(s.capture("big", "-S", "-"))
    assert reply_bytes > 7_000_000, reply_bytes
    before_kib = peak_rss_kib(s.pid)  # one capture's own cost is in it already
    greedy, greedy_decoder = _link(s.socket_path, receive_buffer_bytes=4096)
    other, other_decoder = _link(s.socket_path)
    try:
        greedy.sendall(b"".join(encode(CapturePane(id=10 + n, target="big", start=-1_000_000))
                                for n in range(PIPELINED_CAPTURES)))
        # Queued behind the captures already taken: once it is answered, those have run.
        other.sendall(encode(ListPanes(id=2, all=True)))
        (reply,) = _receive(other, other_decoder, 1)
        assert isinstance(reply, PaneList) and reply.id == 2
        grown_mib = (peak_rss_kib(s.pid) - before_kib) / 1024
        assert grown_mib < 100, grown_mib  # one reply waiting (~8 MB), not forty
        captured = _receive(greedy, greedy_decoder, PIPELINED_CAPTURES)
        assert [(type(m), m.id) for m in captured] == [(Captured, 10 + n) for n in range(PIPELINED_CAPTURES)]
        assert all(len(m.text) == reply_bytes for m in captured)
    finally:
        greedy.close()
        other.close()
