"""What attached clients show of attention: the window tabs' flags and styles, the count of
agents elsewhere that need a person, the notifications written to their terminals, and which
panes a person sees (the board's `viewed`, and `seen` as they come into view).

It listens on the daemon's bus: a change of the board redraws every client at once (not at the
next status refresh), and agent-waiting, -failed, -limited and -idle notify each client whose
session's notify-* option asks for it, unless that client shows the pane.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from muxd.daemon.attention.notifications import NOTIFY_OPTIONS, notice_bytes, notice_text
from muxd.daemon.panes.registry import Window

if TYPE_CHECKING:
    from muxd.attach.status import WindowTab
    from muxd.daemon.attention.service import Attention
    from muxd.daemon.client_side.host import AttachHost
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Session
    from muxd.emulator.cell import Style
    from muxd.protocol.event_messages import DaemonEvent


class NotifiedClient(Protocol):
    """An attached client as attention reaches it (attached.py's AttachedClient)."""

    session: Session
    closed: bool
    term: str
    term_program: str

    def between_frames(self, data: bytes) -> None: ...


class ClientHub(Protocol):
    """The attached clients (hub.py's AttachHub)."""

    @property
    def daemon(self) -> AttachHost: ...

    @property
    def clients(self) -> Mapping[Any, NotifiedClient]: ...

    def changed(self, session: Session | None = None) -> None: ...

# A tab with a bell or an agent blocked on you is drawn in window-status-bell-style; one with
# output, silence or a turn ended (# ~ +) in window-status-activity-style.
_BELL_LIKE = frozenset("!?$X")


class AttentionView:
    def __init__(self, hub: ClientHub, attention: Attention) -> None:
        self.hub = hub
        self.board = attention.board
        self.board.viewed = self.viewed
        self._drawn: dict[str, str] = {}  # pane id -> need kind, as clients last drew them
        attention.bus.listen(self.heard)

    # ------------------------------------------------------------ who sees what

    def viewed(self, pane_id: str) -> bool:
        """Is the pane on an attached client's screen now (its window current in an attached
        session, and not hidden by another pane's zoom)?"""
        pane = self.hub.daemon.registry.pane_by_id(pane_id)
        return pane is not None and any(shows(c.session, pane) for c in self.hub.clients.values() if not c.closed)

    def looked(self, session: Session) -> None:
        """A client of `session` draws a frame: what it shows is seen (finished and failed flags
        go, as tmux's alert flags go when their window is current)."""
        window = session.active_window
        if window is None:
            return
        panes = [window.active_pane] if window.zoomed and window.active_pane else window.panes
        if self.board.seen(p.id for p in panes):
            self._board_changed()

    # ------------------------------------------------------------ the bus

    def heard(self, event: DaemonEvent) -> None:
        self._board_changed()
        if event.kind in NOTIFY_OPTIONS:
            self._notify(event)

    def _board_changed(self) -> None:
        needs = {pane_id: need.kind for pane_id, need in self.board.needs().items()}
        if needs != self._drawn:
            self._drawn = needs
            self.hub.changed()

    def _notify(self, event: DaemonEvent) -> None:
        text = notice_text(event)
        if text is None or event.pane_id is None:
            return
        pane = self.hub.daemon.registry.pane_by_id(event.pane_id)
        options = self.hub.daemon.registry.options
        for client in list(self.hub.clients.values()):
            session = client.session
            if client.closed or (pane is not None and shows(session, pane)):
                continue  # never about the pane in front of you
            if not options.flag(NOTIFY_OPTIONS[event.kind], session.id):
                continue
            method = options.lookup("notify-method", session.id)
            client.between_frames(notice_bytes(text, method, client.term, client.term_program))

    # ------------------------------------------------------------ what a status line shows

    def elsewhere(self, session: Session) -> Counter[str]:
        """The needs of the agents in every other session than `session`, by kind."""
        if not self.board.needs():
            return Counter()
        others = (p.id for s in self.hub.daemon.registry.sessions if s is not session for p in s.panes())
        return self.board.counts(others)

    def tabs(self, session: Session, status_style: Style) -> tuple[WindowTab, ...]:
        """The window list: tmux's flags and muxd's agent flags, a flagged tab in its style."""
        from muxd.attach.status import WindowTab

        active, last = session.active_window, session.last_window
        return tuple(WindowTab(index=w.index, name=w.name, active=w is active,
                               last=w is last and w is not active, zoomed=w.zoomed, alerts=w.alerts,
                               needs=(needs := self.board.flags(p.id for p in w.panes)),
                               style=self._tab_style(w, w.alerts + needs, status_style))
                     for w in session.windows)

    def _tab_style(self, window: Window, flags: str, status_style: Style) -> Style | None:
        if not flags:
            return None
        from muxd.attach.tmux_style import parse_style

        option = ("window-status-bell-style" if _BELL_LIKE.intersection(flags)
                  else "window-status-activity-style")
        try:
            return parse_style(self.hub.daemon.registry.options.lookup(option, window.id), status_style)
        except ValueError:
            return None


def shows(session: Session, pane: Pane) -> bool:
    """Does a client of `session` show `pane` (when not covered by a list or chooser)?"""
    window = pane.window
    if not isinstance(window, Window) or window.session is not session or session.active_window is not window:
        return False
    return not window.zoomed or window.active_pane is pane
