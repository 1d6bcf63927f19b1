"""The hub of attached clients: the daemon side of every `muxd attach` connection, the copy modes
its clients share, the paste buffers they copy into and the sizes they impose on their sessions.
One `AttachedClient` (attached.py) per terminal."""

from __future__ import annotations

import functools
import itertools
import logging
import select
import time
from typing import TYPE_CHECKING, Any

from muxd.config import ATTACH_TYPING_S, MAX_COLUMNS, MAX_LINES, MIN_COLUMNS, MIN_LINES
from muxd.daemon.attention.service import session_fields
from muxd.daemon.client_side.attention_view import AttentionView
from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.registry import Session, Window
from muxd.daemon.panes.target import resolve_session
from muxd.errors import BadRequest, MuxdError
from muxd.protocol.messages import Attach, Attached, AttachInput, AttachResize, Error

if TYPE_CHECKING:
    from muxd.daemon.panes.paste_buffers import PasteBuffers
    from muxd.daemon.client_side.attached import AttachedClient
    from muxd.daemon.client_side.copy_mode import CopyMode
    from muxd.daemon.client_side.host import AttachHost, ClientConnection

log = logging.getLogger(__name__)

ATTACH_MESSAGES = (Attach, AttachInput, AttachResize)


class AttachHub:
    """Every attached client of a daemon, the copy modes they share, and the sizes they impose."""

    def __init__(self, daemon: AttachHost) -> None:
        self.daemon = daemon
        self.clients: dict[ClientConnection, AttachedClient] = {}
        self.copy_modes: dict[str, CopyMode] = {}  # pane id -> its copy mode
        self._client_numbers = itertools.count()  # names of clients without a terminal device
        self.attention = AttentionView(self, daemon.attention)  # flags, counts, notifications

    @functools.cached_property
    def buffers(self) -> PasteBuffers:
        """Copied selections (C-b ] pastes the newest), as many as the buffer-limit option keeps;
        built at the first copy or buffer command."""
        from muxd.daemon.panes.paste_buffers import PasteBuffers

        return PasteBuffers(lambda: self.daemon.registry.options.number("buffer-limit"))

    # ---------------------------------------------------------- messages from a connection

    def receive(self, connection: ClientConnection, message: Any) -> None:
        try:
            if isinstance(message, Attach):
                self._attach(connection, message)
                return
            client = self.clients.get(connection)
            if client is None:
                if message.id:
                    raise BadRequest("this connection is not attached")
                return
            if isinstance(message, AttachInput):
                client.input(message.data)
            elif isinstance(message, AttachResize):
                client.resize(message.columns, message.lines)
        except MuxdError as exc:
            connection.send(Error(id=message.id, code=exc.code, message=exc.message))
        except Exception as exc:  # a bug in key handling costs that key, not the connection
            log.exception("attached client: %s failed", type(message).__name__)
            client = self.clients.get(connection)
            if isinstance(message, Attach) or client is None or not client.started:
                self.clients.pop(connection, None)
                connection.send(Error(id=message.id, code="internal", message=f"internal error: {exc!r}"))
            else:
                client.say(f"internal error: {exc!r} (see the server log)")

    def _attach(self, connection: ClientConnection, request: Attach) -> None:
        if connection in self.clients:
            raise BadRequest("this connection is already attached")
        session = resolve_session(self.daemon.registry, request.target)
        from muxd.daemon.client_side.session_actions import select_target  # (imported at the first attach)

        select_target(self.daemon.registry, session, request.target)
        # Imported at the first attach: a daemon that only runs agents never draws a screen.
        from muxd.daemon.client_side.attached import AttachedClient

        client = AttachedClient(self, connection, session, request.columns, request.lines,
                                request.prefix)
        client.name = request.tty or f"client-{next(self._client_numbers)}"
        client.term, client.term_program = request.term, request.term_program
        self.clients[connection] = client
        connection.send(Attached(id=request.id, session=session.name, direct=request.direct))
        self.fit_session(session)
        if request.direct:  # it starts once its terminal came (or did not: over the socket)
            from muxd.daemon.client_side.terminal_output import receive_tty

            receive_tty(connection, lambda output: self._start(client, output))
        else:
            client.start()
        self._told("client-attached", client)

    def _start(self, client: AttachedClient, output: Any) -> None:
        if client.closed or self.clients.get(client.connection) is not client:
            if output is not None:
                output.close()  # it went while its terminal came
            return
        if output is not None:
            client.output = output
        client.start()

    def input_pane(self, connection: ClientConnection) -> Pane | None:
        """The pane an attached connection's keys go to (None: not attached)."""
        client = self.clients.get(connection)
        return client.active_pane() if client is not None else None

    def connection_closed(self, connection: ClientConnection) -> None:
        client = self.clients.pop(connection, None)
        if client is not None:
            client.closed = True
            client.output.close()
            client.wake()
            self.fit_session(client.session)
            self._told("client-detached", client)

    def server_exiting(self) -> None:
        """Tell every attached client the server is going, as tmux's say `[server exited]`
        (a connection that simply drops reads `[lost server]`)."""
        for client in list(self.clients.values()):
            client.detach("server exited")

    def keep_buffer(self, text: str) -> None:
        self.buffers.keep(text)

    def forget(self, client: AttachedClient) -> None:
        if self.clients.pop(client.connection, None) is not None:
            self._told("client-detached", client)
        self.fit_session(client.session)

    def _told(self, kind: str, client: AttachedClient) -> None:
        """client-attached, client-detached: on the bus, with the client's name and session."""
        self.daemon.attention.publish(kind, client=client.name, **session_fields(client.session))

    # ---------------------------------------------------------- what clients show

    def clients_of(self, session: Session) -> list[AttachedClient]:
        return [c for c in self.clients.values() if c.session is session and not c.closed]

    def placements(self, window: Window) -> list[tuple[Pane, int, int, int, int]]:
        assert window.layout is not None
        if window.zoomed and window.active_pane is not None:
            return [(window.active_pane, 0, 0, window.layout.columns, window.layout.lines)]
        return [(p.pane, p.x, p.y, p.columns, p.lines) for p in window.layout.placements()
                if isinstance(p.pane, Pane)]

    def fit_session(self, session: Session) -> None:
        """Size every window of `session` to its smallest attached client, as tmux does."""
        areas = [c.window_area() for c in self.clients_of(session)]
        if areas and session in self.daemon.registry.sessions:
            columns = min(max(min(a[0] for a in areas), MIN_COLUMNS), MAX_COLUMNS)
            lines = min(max(min(a[1] for a in areas), MIN_LINES), MAX_LINES)
            for window in session.windows:
                window.resize(columns, lines)
        self.changed(session)

    # ---------------------------------------------------------- change notices from the daemon

    def pane_output(self, pane: Pane) -> None:
        """`pane`'s screen changed: the clients showing its window draw it."""
        window = pane.window
        if not isinstance(window, Window) or window.session.active_window is not window:
            return
        for client in self.clients.values():
            if client.session is window.session:
                client.screen_changed()

    def catch_up(self, session: Session) -> bool:
        """Read the output the panes of `session`'s window have waiting while their reading is
        paused (Pane.catch_up), for a frame about to be drawn; True if there was some."""
        window = session.active_window
        caught_up = False
        for pane in list(window.panes) if window is not None else ():  # (a read may end a pane)
            caught_up = pane.catch_up() or caught_up
        return caught_up

    def pane_state_changed(self, pane: Pane) -> None:
        """`pane`'s agent state changed: the clients showing its window draw their status line."""
        window = pane.window
        if isinstance(window, Window) and window.session.active_window is window:
            self.changed(window.session)

    def shows_active(self, pane: Pane) -> bool:
        """Whether an attached client shows `pane` as its active pane: a person watches it."""
        return any(client.active_pane() is pane for client in self.clients.values())

    def keys_waiting(self) -> bool:
        """Whether an attached terminal's socket holds bytes the loop has not read yet (keys,
        most likely): EmulationTurns lets the loop read them before a bulk turn."""
        fds = []
        for connection in self.clients:
            sock = connection.writer.get_extra_info("socket")
            if sock is not None:
                fds.append(sock.fileno())
        try:
            return bool(fds) and bool(select.select(fds, [], [], 0)[0])
        except (OSError, ValueError):  # a socket closing meanwhile
            return False

    def someone_typing(self) -> bool:
        """Whether a client had keys within ATTACH_TYPING_S: a person waits for each echo."""
        now = time.monotonic()
        return any(now - client.last_input < ATTACH_TYPING_S for client in self.clients.values())

    def draw_echo(self, pane: Pane) -> None:
        """`pane`'s output was just emulated ahead of the others (EmulationTurns): the clients
        typing into it draw it at once (AttachedClient.render_now)."""
        for client in list(self.clients.values()):
            if client.active_pane() is pane:
                client.render_now()

    def changed(self, session: Session | None = None) -> None:
        for client in list(self.clients.values()):
            if session is None or client.session is session:
                client.wake()

    # ---------------------------------------------------------- window alerts (attention/alerts.py)

    def attached(self, session: Session) -> bool:
        return bool(self.clients_of(session))

    def alert(self, session: Session, window: Window, word: str, visual: str) -> None:
        """tmux's alerts_set_message: each client of `session` gets a bell (visual off or both)
        and/or a message (on or both)."""
        for client in self.clients_of(session):
            if visual in ("off", "both"):
                client.between_frames(b"\x07")
            if visual != "off":
                client.say(f"{word} in current window" if session.active_window is window
                           else f"{word} in window {window.index}")

    def pane_removed(self, pane: Pane) -> None:
        self.copy_modes.pop(pane.id, None)
        self.changed()
