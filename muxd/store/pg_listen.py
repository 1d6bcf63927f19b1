"""PostgreSQL's LISTEN/NOTIFY for a fleet of daemons (issue 30): how one daemon tells the others
that something changed in the shared database (a task created, a token revoked, an action for a
pane of theirs), without a network layer of muxd's own.

`notify(c, channel, payload)` is a statement of the writer's job: sent in its transaction, it
reaches the listeners when that commits, and never if it rolls back. `PgListener` LISTENs on its
own connection and thread and hands each notification to a callback (on that thread: a daemon
passes it to its loop with call_soon_threadsafe). A connection that breaks is made again; what
was sent meanwhile is lost, so after each reconnection `on_gap` is called: the daemon reads again
what the notifications would have told it; so it is when a notification's receiver failed (it
could not read what it was told of). A receiver that read before listening (a start) asks for
`on_gap` after the first connection too (`gap_first`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

import psycopg

from muxd.errors import BadRequest, MuxdError
from muxd.store.pg_connection import PgConnection, network_bounds
from muxd.store.sqlite_errors import one_line

log = logging.getLogger(__name__)
CHANNEL = re.compile(r"[a-z_][a-z0-9_]{0,62}")  # an unquoted identifier: LISTEN takes no parameter
LISTEN_RECHECK_S = 0.25      # how often the listener looks whether it is asked to stop
LISTEN_RECONNECT_S = 1.0     # between tries to connect again
LISTEN_GAP_RETRY_S = 1.0     # between tries to read again what a reconnection may have missed


def _checked(channel: str) -> str:
    if not CHANNEL.fullmatch(channel):
        raise BadRequest(f"a notification channel is a lowercase identifier, not {channel!r}", channel=channel)
    return channel


def notify(c: PgConnection, channel: str, payload: str) -> None:
    """Tell the listeners of `channel` (when the caller's transaction commits)."""
    c.execute("SELECT pg_notify(?, ?)", (_checked(channel), payload))


class PgListener:
    """LISTENs on `channels` of the database at `url`; `on_notify(channel, payload)` for each
    notification, `on_gap()` after a reconnection (and after the first connection: `gap_first`).
    `start()`, then `stop()`."""

    def __init__(self, url: str, channels: tuple[str, ...], on_notify: Callable[[str, str], None], *,
                 on_gap: Callable[[], None] | None = None, gap_first: bool = False) -> None:
        self.url = url
        self.channels = tuple(_checked(channel) for channel in channels)
        self.on_notify = on_notify
        self.on_gap = on_gap
        self.gap_first = gap_first
        self.listening = threading.Event()  # set while LISTENing (tests wait on it)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="muxd-db-listen", daemon=True)

    def start(self) -> PgListener:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stopping.set()
        self._thread.join(timeout_s)

    def _run(self) -> None:
        connected_before = False
        failing = False  # the tries since the last failure logged failed too: not logged again
        while not self._stopping.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, **network_bounds()) as conn:
                    for channel in self.channels:
                        conn.execute(f"LISTEN {channel}")
                    self.listening.set()
                    if failing:
                        log.info("listening to the database again (%s)", ", ".join(self.channels))
                    failing = False
                    # What was told while not listening is read again, until that works (the database
                    # may let this connection in and still fail the read: too many connections).
                    gap_owed = (connected_before or self.gap_first) and self.on_gap is not None
                    connected_before = True
                    while not self._stopping.is_set():
                        if gap_owed:
                            gap_owed = not self._told(self.on_gap)  # type: ignore[arg-type]
                        for note in conn.notifies(timeout=LISTEN_GAP_RETRY_S if gap_owed else LISTEN_RECHECK_S):
                            # A notification its receiver failed on counts as missed: read again with the rest.
                            if not self._told(self.on_notify, note.channel, note.payload):
                                gap_owed = self.on_gap is not None
            except psycopg.Error as exc:
                if not self._stopping.is_set() and not failing:
                    log.warning("listening to the database (%s): %s; connecting again every %.0f s",
                                ", ".join(self.channels), one_line(exc), LISTEN_RECONNECT_S)
                failing = True
            self.listening.clear()
            self._stopping.wait(LISTEN_RECONNECT_S)

    @staticmethod
    def _told(callback: Callable[..., None], *args: str) -> bool:
        """Whether `callback` worked; its failure is logged (the database's in one line): it never
        ends the listening."""
        try:
            callback(*args)
        except (MuxdError, psycopg.Error) as exc:
            log.error("a database notification's receiver failed: %s", getattr(exc, "message", None) or one_line(exc))
            return False
        except Exception:  # noqa: BLE001 - the listener outlives a faulty receiver
            log.exception("a database notification's receiver failed")
            return False
        return True
