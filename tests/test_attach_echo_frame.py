"""echo_frame (attach/echo_frame.py): the frame render_now draws for an echo in a one-pane
window must be the frame compose would make, status line aside (kept from the last frame
until the render loop composes the whole one), on both emulator backends."""

from __future__ import annotations

import pytest

from muxd.attach import FramePainter, PaneView, StatusLine, WindowTab, compose
from muxd.attach.echo_frame import echo_frame
from muxd.emulator.backend import new_emulator

COLUMNS, LINES = 40, 8  # the client; the pane is one line shorter (the status line)
STATUS = StatusLine("main", (WindowTab(0, "sh", active=True),), right="status")
LATER_STATUS = StatusLine("main", (WindowTab(0, "vim", active=True),), right="later")


@pytest.fixture(params=["pyte", "ghostty"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def whole(emulator: object, status: StatusLine = STATUS):  # type: ignore[no-untyped-def]
    return compose(COLUMNS, LINES, [PaneView(emulator, 0, 0, COLUMNS, LINES - 1, active=True)], status)  # type: ignore[arg-type]


OUTPUTS = [
    b"x",  # an echo
    b"\x1b[1;31mred\x1b[0m and plain\r\n$ ",  # a styled row, a new line
    b"\x1b[?25l",  # the cursor hidden
    b"\x1b[?1h\x1b[?2004h",  # modes the painter mirrors
    b"\x1b[3;10H\x1b[K\xe4\xb8\xad wide",  # a wide character mid-screen, the cursor moved
    b"\r\n" * 12 + b"scrolled",  # rows scrolled off
    b"\x1b[2J\x1b[H",  # cleared
]


@pytest.mark.parametrize("output", OUTPUTS, ids=range(len(OUTPUTS)))
def test_echo_frame_is_compose_with_the_last_status_line(backend: str, output: bytes) -> None:
    emulator = new_emulator(COLUMNS, LINES - 1, backend=backend)
    emulator.feed(b"$ ls\r\nfile\r\n$ ")
    last = whole(emulator)
    emulator.feed(output)
    got = echo_frame(last, emulator)
    want = whole(emulator, LATER_STATUS)  # the status line moved on meanwhile
    assert got.rows[:-1] == want.rows[:-1]
    assert got.rows[-1] is last.rows[-1] and got.rows[-1] != want.rows[-1]
    assert (got.cursor_visible, got.modes) == (want.cursor_visible, want.modes)
    if want.cursor_visible:
        assert got.cursor == want.cursor


def test_painting_the_echo_frame_sends_only_the_changed_row(backend: str) -> None:
    emulator = new_emulator(COLUMNS, LINES - 1, backend=backend)
    emulator.feed(b"$ ls\r\nfile\r\n$ ")
    painter = FramePainter()
    last = whole(emulator)
    painter.paint(last)
    emulator.feed(b"x")
    data = painter.paint(echo_frame(last, emulator))
    assert b"x" in data and b"file" not in data and b"status" not in data
