"""The short ways a client's frame is made, each against the long way it stands for.

- compose's one-pane path (a live pane covering the whole window area takes its rows as they
  are, with no layout planned) gives the frame the general path gives, on both backends;
- a frame woken by pane output alone may reuse a status line made just before, but a change
  the status line shows (a window renamed) is drawn in the very next frame.
"""

from __future__ import annotations

import socket
import sys

import pytest

from muxd.attach import PaneView, StatusLine, WindowTab, compose
from muxd.emulator.backend import new_emulator
from muxd.testing.patience import stretched
from test_attach import TUI_60HZ

COLUMNS, LINES = 40, 8
STATUS = StatusLine("main", (WindowTab(0, "sh", active=True),), right="status")
PROMPT = StatusLine("main", message="(rename-window) ab", message_cursor=18)
OUTPUTS = [
    b"$ ls\r\nfile\r\n$ ",
    b"\x1b[1;31mred\x1b[0m and \x1b[38;5;200mpink\x1b[48;2;1;2;3m on rgb\x1b[0m\r\n",
    b"\x1b[?25l\x1b[?1h\x1b[?2004h\x1b[?1003h",  # cursor hidden, modes the painter mirrors
    b"\x1b[3;10H\xe4\xb8\xad wide \x1b[1;39H\xe4\xb8\xad",  # wide characters, one at the edge
    b"e\xcc\x81 \x1b[2;1H\x1b[44m\x1b[K\x1b[0m",  # a combining mark, a row erased in a colour
    b"\r\n" * 12 + b"scrolled",
]


@pytest.fixture(params=["pyte", "ghostty"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("status", [STATUS, PROMPT, None], ids=["status", "prompt", "no-status"])
@pytest.mark.parametrize("output", OUTPUTS, ids=range(len(OUTPUTS)))
def test_one_pane_frame_is_the_general_compose(backend: str, output: bytes, status: StatusLine | None) -> None:
    area = LINES - 1 if status is not None else LINES
    emulator = new_emulator(COLUMNS, area, backend=backend)
    emulator.feed(output)
    views = [PaneView(emulator, 0, 0, COLUMNS, area, active=True)]
    short = compose(COLUMNS, LINES, views, status)
    general = compose(COLUMNS, LINES, views, status, window_size=(COLUMNS, area))  # plans the layout
    assert short.rows == general.rows
    assert (short.cursor, short.cursor_visible, short.modes) == (general.cursor, general.cursor_visible,
                                                                 general.modes)


def test_a_rename_shows_in_the_first_frame_after_it_while_output_redraws(muxd_server, tmp_path) -> None:
    """The rename and the frames go down one connection, so every frame after the rename's
    reply was made after the rename: the first of them shows the new name, though pane output
    (which alone would reuse the status line made a moment before) keeps waking the client."""
    from muxd.config import PROTOCOL_VERSION
    from muxd.protocol.codec import decode_server_message, encode
    from muxd.protocol.command_messages import RenameWindow
    from muxd.protocol.framing import FrameDecoder
    from muxd.protocol.messages import Attach, AttachOutput, Hello, Ok

    s = muxd_server
    script = tmp_path / "tui.py"
    script.write_text(TUI_60HZ)
    s.cli("new-session", "-d", "-s", "work", "-n", "before", "--", sys.executable, str(script), check=True)
    s.wait_for_text("work", "frame")
    client = new_emulator(80, 24, backend="pyte")  # the terminal: what the frames draw
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as link:
        link.connect(str(s.socket_path))
        link.settimeout(stretched(10))
        link.sendall(encode(Hello(id=1, protocol_version=PROTOCOL_VERSION, client="frames"))
                     + encode(Attach(id=2, target="work", columns=80, lines=24)))
        decoder = FrameDecoder()

        def messages():  # type: ignore[no-untyped-def]
            while True:
                chunk = link.recv(1 << 20)
                assert chunk, "the daemon closed the connection"
                yield from map(decode_server_message, decoder.feed(chunk))

        stream = messages()
        drawn = 0
        for message in stream:  # some frames of the TUI first: the status line is made and reused
            if isinstance(message, AttachOutput):
                client.feed(message.data)
                drawn += 1
                if drawn == 5:
                    break
        assert "0:before*" in client.display_lines()[-1]
        link.sendall(encode(RenameWindow(id=3, name="after", target="work:0")))
        for message in stream:
            if isinstance(message, AttachOutput):
                client.feed(message.data)
            elif isinstance(message, Ok) and message.id == 3:
                break
        first_after = next(m for m in stream if isinstance(m, AttachOutput))
        client.feed(first_after.data)
        assert "0:after*" in client.display_lines()[-1], client.display_lines()[-1]
