"""The records a server lists: its sessions, windows and panes as list-sessions, list-windows and
list-panes answer them (with each session's attached clients and its agents' needs, each
window's agent flags), read by those commands and by the formats the daemon expands
(daemon/commands/formats.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from muxd.daemon.attention.board import AttentionBoard
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Registry, Session
    from muxd.protocol.messages import PaneInfo, SessionInfo, WindowInfo


def session_infos(registry: Registry, clients: Iterable[Any], board: AttentionBoard) -> list[SessionInfo]:
    """Every session's record; `clients`: the attached clients (each with its `session`)."""
    attached = [client.session for client in clients]
    return [s.info(attached.count(s), dict(board.counts(p.id for p in s.panes()))) for s in registry.sessions]


def window_infos(sessions: Iterable[Session], board: AttentionBoard) -> list[WindowInfo]:
    return [w.info(board.flags(p.id for p in w.panes)) for s in sessions for w in s.windows]


def pane_infos(registry: Registry, panes: Iterable[Pane], *, screen: bool = False) -> list[PaneInfo]:
    return [registry.pane_info(p, screen=screen) for p in panes]
