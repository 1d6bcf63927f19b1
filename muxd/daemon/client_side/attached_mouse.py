"""Mouse events of an attached client: forwarded to a program that tracks the mouse (in its
own coordinates), else the wheel scrolls (copy mode), a click selects the pane, a drag selects
text and its release copies it, as tmux with `mouse on`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.client_side.copy_mode import CopyMode
from muxd.daemon.client_side.input_parser import MOTION, Mouse, encode_mouse
from muxd.daemon.panes.pane import Pane

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Client

MOUSE_TRACKING_MODES = frozenset({9, 1000, 1002, 1003})
MOTION_TRACKING_MODES = frozenset({1002, 1003})
SGR_MOUSE_MODE = 1006


def mouse_event(client: Client, event: Mouse) -> bool:
    """Scroll, select or forward a mouse event; False when it only went to a program."""
    window = client.session.active_window
    if window is None or window.layout is None or client.viewing():
        return False
    placements = client.hub.placements(window)
    if client.press is not None and not event.wheel and (event.release or event.button & MOTION):
        # A drag goes on in the pane where it began, wherever the pointer is now.
        held = next(((pane, x, y) for pane, x, y, _, _ in placements if pane.id == client.press[0]), None)
        if held is not None:
            return _drag(client, event, *held)
        client.press = None
    hit = next(((pane, x, y) for pane, x, y, w, h in placements
                if x <= event.x < x + w and y <= event.y < y + h), None)
    if hit is None:
        return False
    pane, x, y = hit
    copy = client.hub.copy_modes.get(pane.id)
    modes = pane.emulator.private_modes
    if copy is None and modes & MOUSE_TRACKING_MODES and not pane.exited:
        if not event.button & MOTION or modes & MOTION_TRACKING_MODES:  # drags only if asked for
            pane.write(encode_mouse(event, event.x - x, event.y - y, sgr=SGR_MOUSE_MODE in modes))
        return False
    if not client.painter.mouse:  # the mouse option off: only programs that ask get the mouse
        return False
    if event.wheel:
        if event.release:
            return False
        from muxd.attach.selection import pane_geometry

        if copy is None:
            if event.wheel > 0:
                return False
            copy = client.hub.copy_modes[pane.id] = client.new_copy_mode(pane)
        if not copy.wheel(event.wheel, pane_geometry(pane.emulator)):
            del client.hub.copy_modes[pane.id]
        return True
    if not event.release and event.button & 3 == 0 and not event.button & MOTION:
        window.active_pane = pane  # a click selects the pane, as tmux with mouse on
        from muxd.attach.selection import point_at

        client.press = (pane.id, point_at(pane.emulator, copy.offset if copy else 0, event.x - x, event.y - y))
        if copy is not None:
            copy.anchor = copy.end = None  # a click drops the selection
        return True
    return False


def _drag(client: Client, event: Mouse, pane: Pane, x: int, y: int) -> bool:
    """The left button held since a press in `pane`: select from there; copy on release."""
    from muxd.attach.selection import point_at

    assert client.press is not None
    copy = client.hub.copy_modes.get(pane.id)
    if event.release:
        client.press = None
        if copy is not None and copy.selection() is not None:
            client.copy_selection(pane, copy)
        return True
    if copy is None:
        copy = client.hub.copy_modes[pane.id] = CopyMode(entered_by_drag=True)
    if copy.anchor is None:
        copy.anchor = client.press[1]
    copy.end = copy.cursor = point_at(pane.emulator, copy.offset, event.x - x, event.y - y)
    return True
