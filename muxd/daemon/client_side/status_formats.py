"""status-left and status-right: tmux formats drawn at the two ends of a client's status line.

As tmux: the template's strftime escapes (`%H:%M`) are expanded first, then its formats
(`#{session_name}`, `#S`, `#{pane_current_command}`… muxd/formats.py) with the active pane's
variables, plus `#{agent_status}` (`claude · Thinking 12s · 4.8k tok`) and the agents in other
sessions that need a person (`#{agent_attention}`: `2 waiting · 1 failed`, `#{agents_waiting}`…:
daemon/attention/elsewhere.py), muxd's default right side; style directives (`#[fg=red]`) are
taken out, not drawn, and `##` is drawn `#` (tmux's #{window_flags} escapes its `#`); the text is
cut to status-left-length / status-right-length cells.

The defaults keep muxd's own drawing (the session name cut inside its brackets; the right side
made without expanding anything: it is redrawn with every frame). The variables cost a look at
the pane's processes, so a client keeps its texts for STATUS_FORMAT_REFRESH_S unless what it
shows changes (another window, pane or template, or the agents that need a person).
"""

from __future__ import annotations

import os
import re
import time
from collections import ChainMap
from collections.abc import Mapping
from typing import TYPE_CHECKING

from muxd.attach.status import cut_cells
from muxd.daemon.attention.elsewhere import attention_text, attention_variables, status_right
from muxd.daemon.client_side.status_line import agent_status

if TYPE_CHECKING:
    from muxd.daemon.client_side.client import Hub
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Session

STATUS_FORMAT_REFRESH_S = 1.0
DEFAULT_LEFT = "[#{session_name}] "
# The count elsewhere, then the active pane's agent, " · " between them when both are there.
DEFAULT_RIGHT = "#{agent_attention}#{?#{&&:#{agent_attention},#{agent_status}}, · ,}#{agent_status}"
_STYLE_DIRECTIVE = re.compile(r"#\[[^\]]*\]")


def expand_status(template: str, variables: Mapping[str, str], now: float) -> str:
    """One side's text: strftime, then formats, without style directives."""
    from muxd.formats import expand

    try:
        timed = time.strftime(template.replace("##", "\0"), time.localtime(now)).replace("\0", "##")
    except ValueError:  # a lone % at the end
        timed = template
    return _STYLE_DIRECTIVE.sub("", expand(timed, variables)).replace("##", "#").replace("\n", " ")


class StatusFormats:
    """One client's expanded status-left and status-right, refreshed as the docstring says."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._until = 0.0
        self._texts: tuple[str | None, str] = (None, "")

    def texts(self, hub: Hub, session: Session, pane: Pane | None) -> tuple[str | None, str]:
        """(left, right): left None for muxd's own drawing of the default."""
        options = hub.daemon.registry.options
        left, right = options.lookup("status-left", session.id), options.lookup("status-right", session.id)
        elsewhere = hub.attention.elsewhere(session)
        if left == DEFAULT_LEFT and right == DEFAULT_RIGHT:  # muxd's own: nothing to expand
            return None, status_right(attention_text(elsewhere), agent_status(pane.agent) if pane is not None else "")
        window = session.active_window
        key = (left, right, session.id, session.name, window.id if window else None,
               window.name if window else None, window.index if window else None, pane.id if pane else None,
               tuple(sorted(elsewhere.items())), window.alerts if window else None)
        now = time.monotonic()
        if key != self._key or now >= self._until:
            variables = _variables(hub, session, pane, elsewhere)
            wall = time.time()
            left_text = None if left == DEFAULT_LEFT else cut_cells(
                expand_status(left, variables, wall), options.number("status-left-length", session.id))
            right_text = cut_cells(expand_status(right, variables, wall), options.number("status-right-length", session.id))
            self._key, self._until, self._texts = key, now + STATUS_FORMAT_REFRESH_S, (left_text, right_text)
        return self._texts


def _variables(hub: Hub, session: Session, pane: Pane | None, elsewhere: Mapping[str, int]) -> ChainMap[str, str]:
    from muxd.daemon.panes.format_variables import (
        pane_variables,
        server_variables,
        session_variables,
        window_variables,
    )

    daemon = hub.daemon
    attached = len(hub.clients_of(session))
    layers: list[Mapping[str, str]] = [{"agent_status": agent_status(pane.agent) if pane is not None else "",
                                        **attention_variables(elsewhere)}]
    window = session.active_window
    board = hub.attention.board
    window_record = window.info(board.flags(p.id for p in window.panes)) if window is not None else None
    if pane is not None:
        layers.append(pane_variables(daemon.registry.pane_info(pane), window_record))
    if window_record is not None:
        layers.append(window_variables(window_record))
    needs = dict(board.counts(p.id for p in session.panes()))
    layers += [session_variables(session.info(attached, needs)), server_variables(str(daemon.socket_path), os.getpid())]
    return ChainMap(*layers)

