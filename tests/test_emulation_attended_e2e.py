"""Typing first, on a real daemon: keys typed into an attached pane are echoed to the client
while another window of the session floods, and the flood goes on meanwhile."""

from __future__ import annotations

import socket

from muxd.config import PROTOCOL_VERSION
from muxd.protocol.codec import decode_server_message, encode
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Attach, Attached, AttachInput, AttachOutput, Hello, Welcome
from muxd.testing.floods import looping_cat, write_flood
from muxd.testing.patience import Deadline, stretched
from muxd.testing.wait import wait_until

FLOOD_FILE_BYTES = 1 << 20
TYPED = "muxd-typing-first"
ECHO_TIMEOUT_S = 20.0  # one key's echo on a loaded machine; the old emulation took ~0.03-0.1 s


class AttachLink:
    """An attached terminal over the protocol: keys in, the frames' bytes out."""

    def __init__(self, server, session: str) -> None:
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(stretched(10))
        self.socket.connect(str(server.socket_path))
        self.socket.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="test"))
                            + encode(Attach(id=2, target=session, columns=100, lines=30)))
        self.decoder, self.drawn = FrameDecoder(), bytearray()
        replies: list[object] = []
        while len(replies) < 2:
            replies += [m for m in self._messages() if hasattr(m, "id")]
        assert isinstance(replies[0], Welcome) and isinstance(replies[1], Attached), replies

    def _messages(self) -> list[object]:
        messages = [decode_server_message(frame) for frame in self.decoder.feed(self.socket.recv(1 << 20))]
        for message in messages:
            if isinstance(message, AttachOutput):
                self.drawn += message.data
        return messages

    def type_and_see(self, key: str) -> None:
        """Type `key` and read frames until one draws it."""
        self.drawn.clear()
        self.socket.sendall(encode(AttachInput(id=0, data=key.encode())))
        deadline = Deadline(ECHO_TIMEOUT_S)
        while key.encode() not in self.drawn:
            assert not deadline.expired(), f"{key!r} was not echoed; drawn: {bytes(self.drawn[-200:])!r}"
            self._messages()

    def close(self) -> None:
        self.socket.close()


def test_keys_typed_into_an_attached_pane_are_echoed_while_another_window_floods(muxd_server, tmp_path):
    s = muxd_server
    flood = write_flood("bold rows", tmp_path, FLOOD_FILE_BYTES)
    s.cli("new-session", "-d", "-s", "work", "-x", "100", "-y", "29", "--", "cat", check=True)
    s.cli("new-window", "-d", "-t", "work", "-n", "flood", "--", *looping_cat(flood), check=True)
    s.wait_for_text("work:flood", "match", timeout=30)
    link = AttachLink(s, "work")
    try:
        for key in TYPED:
            link.type_and_see(key)
        # The typed pane shows the whole line, and the flood, which got its turns too, moves on.
        assert TYPED in s.capture("work:0")
        first = s.capture("work:flood")
        wait_until(lambda: s.capture("work:flood") != first, timeout=10, message="the flood moving on")
    finally:
        link.close()
