"""`echo_frame`: the next frame of a client whose window is one pane filling it, when only that
pane's screen is known to have changed: its live rows over the last frame, the rows below it
(the status line) as they were.

For an echo (daemon/client_side/attached.py's render_now): it draws the typed key without
composing the whole screen, status line included. The planned frame composes the whole frame a
frame interval later, and paints whatever else changed meanwhile.
"""

from __future__ import annotations

from muxd.emulator import Emulator

from .frame import Frame
from .pane_rows import live_rows


def echo_frame(last: Frame, emulator: Emulator) -> Frame:
    """`last` with rows 0.. of the client replaced by `emulator`'s visible rows and the cursor
    and modes its own, as compose draws a live pane at (0, 0) as wide as the client."""
    assert emulator.columns == last.columns and emulator.lines <= last.lines
    pane_rows = live_rows(emulator, vt=True)  # as compose reads a pane filling the client
    x, y = emulator.cursor
    shown = x < emulator.columns and y < emulator.lines
    return Frame(last.columns, last.lines, (*pane_rows, *last.rows[len(pane_rows):]),
                 (x, y) if shown else (0, 0), shown and emulator.cursor_visible, emulator.private_modes)
