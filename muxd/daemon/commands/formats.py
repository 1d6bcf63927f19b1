"""expand-format: tmux formats expanded from the daemon's own records, in one round trip.

What display-message -p and list-panes / list-windows / list-sessions -F print: the same
FormatScope and variables a client builds from list-sessions, list-windows and list-panes
(daemon/panes/format_variables.py), here read straight from the registry and cut to what the
requesting principal sees, as those lists' replies are. A tmux shim call (cli/tmux_fast_path.py)
then sends one request and prints its lines.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from muxd.daemon.access.control import current_principal
from muxd.daemon.commands.table import command
from muxd.daemon.panes.format_variables import (
    FormatScope, expanded_lines, server_variables, variable_lines, wants_screen,
)
from muxd.daemon.panes.listings import pane_infos, session_infos, window_infos
from muxd.daemon.panes.pane import Pane
from muxd.errors import BadRequest
from muxd.protocol.messages import ExpandFormat, Expanded, PaneList, SessionList, WindowList

if TYPE_CHECKING:
    from muxd.daemon.access.control import Principal
    from muxd.daemon.server import Daemon


class DaemonRecords:
    """The server's sessions, windows and panes as `principal`'s list requests would have them
    (the lists a FormatScope reads); panes with their cursor and history size if `screen`."""

    def __init__(self, daemon: Daemon, principal: Principal, screen: bool) -> None:
        self._daemon = daemon
        self._principal = principal
        self._screen = screen

    def _visible(self, listing: Any) -> Any:
        return self._daemon.access.visible_part(self._principal, listing, self._daemon.registry)

    def sessions(self) -> list[Any]:
        daemon = self._daemon
        sessions = session_infos(daemon.registry, daemon.attach_hub.clients.values(), daemon.attention.board)
        return self._visible(SessionList(id=0, sessions=sessions)).sessions  # type: ignore[no-any-return]

    def windows(self) -> list[Any]:
        windows = window_infos(self._daemon.registry.sessions, self._daemon.attention.board)
        return self._visible(WindowList(id=0, windows=windows)).windows  # type: ignore[no-any-return]

    def panes(self) -> list[Any]:
        panes = pane_infos(self._daemon.registry, self._daemon.registry.all_panes(), screen=self._screen)
        return self._visible(PaneList(id=0, panes=panes)).panes  # type: ignore[no-any-return]


@command(ExpandFormat)
async def expand_format(daemon: Daemon, req: ExpandFormat) -> Expanded:
    if req.listing != "pane" and req.template is None:
        raise BadRequest(f"expanding {req.listing} needs a template", field="template")
    principal = current_principal()
    anchor = None
    if req.listing == "pane" or (req.listing != "sessions" and not req.all):
        # The target as display-message's show-pane resolved it, checked as every pane command's
        # (no await between this and the reply: the pane checked is the pane read).
        resolved = daemon.access.authorize(principal, req, "pane", daemon.registry)
        assert isinstance(resolved, Pane)
        anchor = daemon.registry.pane_info(resolved, screen=req.listing == "pane")
    template = req.template or ""
    records = DaemonRecords(daemon, principal, wants_screen(template + (req.filter or "")))
    scope = FormatScope(records, server_variables(str(daemon.socket_path), os.getpid(), req.variables))
    if req.listing == "pane":
        assert anchor is not None
        lines = variable_lines(scope.of_pane(anchor)) if req.template is None else expanded_lines(
            [anchor], scope.of_pane, req.template, req.filter)
    elif req.listing == "panes":
        panes = sorted(scope.panes().values(), key=lambda p: p.session)  # tmux lists sessions by name
        if anchor is not None:
            panes = [p for p in panes if (p.session_id == anchor.session_id if req.session_scope
                                          else p.window_id == anchor.window_id)]
        lines = expanded_lines(panes, scope.of_pane, template, req.filter)
    elif req.listing == "windows":
        windows = sorted(scope.windows().values(), key=lambda w: w.session)
        if anchor is not None:
            windows = [w for w in windows if w.session_id == anchor.session_id]
        lines = expanded_lines(windows, scope.of_window, template, req.filter)
    else:
        sessions = sorted(scope.sessions().values(), key=lambda s: s.name)
        lines = expanded_lines(sessions, scope.of_session, template, req.filter)
    return Expanded(id=req.id, lines=lines)
