"""The libghostty backend's `private_modes`, read in one native call for every reported mode,
against the pyte backend's after each step of a program setting and resetting them."""

from __future__ import annotations

from muxd.emulator.backend import new_emulator

# pyte keeps DECTCEM (25) among its modes, where the native backend answers it as
# cursor_visible, and leaves the alternate screen (1049) out.
NOT_COMPARED = {25, 1049}
STEPS = [
    b"",
    b"\x1b[?2004h",
    b"\x1b[?1h\x1b[?1003h\x1b[?1006h",
    b"\x1b[?2004l",
    b"\x1b[?1l\x1b[?1003l",
    b"\x1b=",
    b"\x1b[?1049h\x1b[?1000h",
    b"\x1b[?1049l\x1b[?1000l\x1b[?1006l",
    b"\x1b[?7l\x1b[?6h",
    b"\x1b[?1002h\x1b[?1004h\x1b[?12h",
    b"text, no mode",  # output that changes no mode: the same answer
    b"\x1bc",  # a reset puts them all back
]


def test_modes_read_at_once_follow_every_set_and_reset() -> None:
    native, oracle = new_emulator(80, 24, backend="ghostty"), new_emulator(80, 24, backend="pyte")
    seen = set()
    for step in STEPS:
        native.feed(step)
        oracle.feed(step)
        assert native.private_modes - NOT_COMPARED == oracle.private_modes - NOT_COMPARED, step
        seen |= native.private_modes
    assert {1, 66, 1000, 1002, 1003, 1006, 2004} <= seen  # the steps did set what the painter mirrors
