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
`on_gap` once its LISTEN took effect too (`gap_first`).

A daemon holds one listener (PgDatabase.listener: one connection), each of its parts `hear`ing
its own channel with its own receivers: a part added while it runs is LISTENed at its next look.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import NamedTuple

import psycopg

from muxd.errors import BadRequest, MuxdError
from muxd.store.pg_connection import PgConnection, network_bounds
from muxd.store.sqlite_errors import one_line

log = logging.getLogger(__name__)
CHANNEL = re.compile(r"[a-z_][a-z0-9_]{0,62}")  # an unquoted identifier: LISTEN takes no parameter
LISTEN_RECHECK_S = 0.25      # how often the listener looks whether it is asked to stop or to hear a channel more
LISTEN_RECONNECT_S = 1.0     # between tries to connect again
LISTEN_GAP_RETRY_S = 1.0     # between tries to read again what a reconnection may have missed


def _checked(channel: str) -> str:
    if not CHANNEL.fullmatch(channel):
        raise BadRequest(f"a notification channel is a lowercase identifier, not {channel!r}", channel=channel)
    return channel


def notify(c: PgConnection, channel: str, payload: str) -> None:
    """Tell the listeners of `channel` (when the caller's transaction commits)."""
    c.execute("SELECT pg_notify(?, ?)", (_checked(channel), payload))


class _Receiver(NamedTuple):
    on_notify: Callable[[str, str], None]
    on_gap: Callable[[], None] | None
    gap_first: bool
    listening: threading.Event  # set once its LISTEN took effect


class PgListener:
    """LISTENs on the database at `url`: `hear(channel, on_notify, on_gap=…)` for each channel,
    `on_notify(channel, payload)` for each notification, `on_gap()` after a reconnection (and once
    listening: `gap_first`). `channels` with their receivers may be given at once. `start()`,
    then `stop()`."""

    def __init__(self, url: str, channels: tuple[str, ...] = (), on_notify: Callable[[str, str], None] | None = None,
                 *, on_gap: Callable[[], None] | None = None, gap_first: bool = False) -> None:
        self.url = url
        self.listening = threading.Event()  # set while LISTENing (tests wait on it)
        self._lock = threading.Lock()
        self._receivers: dict[str, _Receiver] = {}
        self._unlistened: set[str] = set()  # heard of, not LISTENed on this connection yet
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="muxd-db-listen", daemon=True)
        for channel in channels:
            assert on_notify is not None
            self.hear(channel, on_notify, on_gap=on_gap, gap_first=gap_first)

    @property
    def channels(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._receivers)

    def hear(self, channel: str, on_notify: Callable[[str, str], None], *, on_gap: Callable[[], None] | None = None,
             gap_first: bool = False) -> threading.Event:
        """Listen on `channel` too (within LISTEN_RECHECK_S when running); an event set once its
        LISTEN took effect."""
        receiver = _Receiver(on_notify, on_gap, gap_first, threading.Event())
        with self._lock:
            self._receivers[_checked(channel)] = receiver
            self._unlistened.add(channel)
        return receiver.listening

    def unhear(self, channel: str) -> None:
        """Tell nothing more of `channel` (its notifications are dropped)."""
        with self._lock:
            self._receivers.pop(channel, None)
            self._unlistened.discard(channel)

    def start(self) -> PgListener:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _listen_new(self, conn: psycopg.Connection, owed: dict[Callable[[], None], None], *, again: bool) -> None:
        """LISTEN on the channels heard of since the last look; their gaps owed (`again`: every
        channel's, after a reconnection; else those that asked for one at first)."""
        with self._lock:
            channels, self._unlistened = self._unlistened, set()
        for channel in sorted(channels):
            conn.execute(f"LISTEN {channel}")
            with self._lock:
                receiver = self._receivers.get(channel)
            if receiver is None:
                continue
            receiver.listening.set()
            if receiver.on_gap is not None and (again or receiver.gap_first):
                owed[receiver.on_gap] = None

    def _run(self) -> None:
        connected_before = False
        failing = False  # the tries since the last failure logged failed too: not logged again
        while not self._stopping.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, **network_bounds()) as conn:
                    with self._lock:
                        self._unlistened = set(self._receivers)
                    # What was told while not listening is read again, until that works (the database
                    # may let this connection in and still fail the read: too many connections).
                    owed: dict[Callable[[], None], None] = {}
                    self._listen_new(conn, owed, again=connected_before)
                    self.listening.set()
                    if failing:
                        log.info("listening to the database again (%s)", ", ".join(self.channels))
                    failing = False
                    connected_before = True
                    while not self._stopping.is_set():
                        self._listen_new(conn, owed, again=False)
                        owed = {gap: None for gap in owed if not self._told(gap)}
                        for note in conn.notifies(timeout=LISTEN_GAP_RETRY_S if owed else LISTEN_RECHECK_S):
                            with self._lock:
                                receiver = self._receivers.get(note.channel)
                            if receiver is None:
                                continue
                            # A notification its receiver failed on counts as missed: read again with the rest.
                            if not self._told(receiver.on_notify, note.channel, note.payload) and receiver.on_gap:
                                owed[receiver.on_gap] = None
            except psycopg.Error as exc:
                if not self._stopping.is_set() and not failing:
                    log.warning("listening to the database (%s): %s; connecting again every %.0f s",
                                ", ".join(self.channels), one_line(exc), LISTEN_RECONNECT_S)
                failing = True
            self.listening.clear()
            with self._lock:
                for receiver in self._receivers.values():
                    receiver.listening.clear()
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
