"""What an attached client's frame is composed from: the panes it shows, as `PaneView`s, and its
status line (daemon/client_side/attached.py composes and paints them)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from muxd.attach.compose import PaneView, StatusLine
from muxd.attach.selection import copy_cursor_at, highlight_spans
from muxd.attach.tmux_style import parse_style
from muxd.emulator.cell import DEFAULT_STYLE

if TYPE_CHECKING:
    from muxd.daemon.client_side.chooser import Chooser
    from muxd.daemon.client_side.client import Hub
    from muxd.daemon.client_side.copy_mode import CopyMode
    from muxd.daemon.client_side.host import AttachHost
    from muxd.daemon.client_side.status_formats import StatusFormats
    from muxd.daemon.client_side.status_prompt import Prompt
    from muxd.daemon.panes.registry import Session
    from muxd.emulator import Emulator


class FramedClient(Protocol):
    """What these read of an attached client (attached.py's AttachedClient)."""

    session: Session
    help_view: Emulator | None
    help_scroll: CopyMode
    chooser: Chooser | None
    prompt: Prompt | None
    notice: tuple[str, float] | None
    status_formats: StatusFormats

    @property
    def hub(self) -> Hub: ...

    @property
    def daemon(self) -> AttachHost: ...

    def viewing(self) -> bool: ...


def pane_views(client: FramedClient, columns: int, lines: int) -> list[PaneView]:
    """The panes `client` shows in its `columns` x `lines` window area (or the list covering
    them: the `?` keys, a command's output, the chooser)."""
    window = client.session.active_window
    if client.viewing():
        view = client.help_view or client.chooser.view(columns, lines)  # type: ignore[union-attr]
        offset = client.help_scroll.offset if client.help_view is not None else 0
        return [PaneView(emulator=view, x=0, y=0, columns=min(columns, view.columns),
                         lines=min(lines, view.lines), active=True, scroll_offset=offset)]
    if window is None or window.layout is None:
        return []
    views = []
    for pane, x, y, width, height in client.hub.placements(window):
        if x >= columns or y >= lines:
            continue
        copy = client.hub.copy_modes.get(pane.id)
        dead = f"Pane is dead (status {pane.exit_code})" if pane.exited else None
        selection = copy.selection() if copy else None
        view_lines = min(height, lines - y, pane.lines)
        views.append(PaneView(emulator=pane.emulator, x=x, y=y,
                              columns=min(width, columns - x, pane.columns), lines=view_lines,
                              active=pane is window.active_pane,
                              scroll_offset=copy.offset if copy else 0, position_shown=copy is not None,
                              dead_message=dead,
                              highlights=highlight_spans(pane.emulator, selection, copy.offset, view_lines)
                              if copy and selection else (),
                              copy_cursor=copy_cursor_at(pane.emulator, copy, view_lines) if copy else None))
    return views


def status_line(client: FramedClient) -> StatusLine:
    """`client`'s status line as it stands: its session's windows, status-left and -right, and
    the prompt or notice it shows (a notice past its time goes)."""
    session = client.session
    options = client.daemon.registry.options
    style = parse_style(options.lookup("status-style", session.id), DEFAULT_STYLE)
    window = session.active_window
    pane = window.active_pane if window else None
    left, right = client.status_formats.texts(client.hub, session, pane)
    message = cursor = None
    if client.prompt is not None:
        message, cursor = client.prompt.shown(), client.prompt.cursor_cell()
    elif client.notice is not None:
        if time.monotonic() < client.notice[1]:
            message = client.notice[0]
        else:
            client.notice = None
    return StatusLine(session=session.name, windows=client.hub.attention.tabs(session, style), left=left,
                      right=right, message=message, message_cursor=cursor, style=style,
                      message_style=parse_style(options.lookup("message-style", session.id), DEFAULT_STYLE))
