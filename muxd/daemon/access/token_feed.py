"""`TokenFeed`: the tokens other daemons of a shared PostgreSQL database made or revoked since this
one loaded its own (issue 30). A token not bound to panes is valid fleet-wide: made through host A
it must open a connection on host B, and revoked through A it must stop working on B at once, not
at B's next start.

Each change to a token row is told on the channel `muxd_access` (store/tokens.py, in the writing
transaction). The feed LISTENs (store/pg_listen.py, on the database's one listener), reads the row
told of (on the database's writer, as every job) and keeps it until the access layer takes it,
on the loop, before it checks a principal (`AccessControl._catch_up`). After a lost connection
the feed reads every token again: what was told meanwhile is lost.
"""

from __future__ import annotations

import logging
import threading

from muxd.store import tokens
from muxd.store.database import Database
from muxd.store.pg_listen import PgListener
from muxd.store.tokens import ACCESS_CHANNEL, TokenRecord

log = logging.getLogger(__name__)


class TokenFeed:
    """Listens for token changes on `listener`, the one of the PostgreSQL database `db` writes to."""

    def __init__(self, db: Database, listener: PgListener) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._fresh: list[TokenRecord] = []
        self._listener = listener
        listening = listener.hear(ACCESS_CHANNEL, self._told, on_gap=self._missed)
        # What was told before LISTEN took effect is read in full once it has (a start is not served before).
        if not listening.wait(db.busy_timeout_s):
            log.warning("not listening to token changes of other daemons yet: %s", db.path)
        self._missed()

    def _told(self, _channel: str, token_id: str) -> None:
        self._add(self._db.run_soon(lambda c: tokens.load_token(c, token_id)).result())

    def _missed(self) -> None:
        self._add(self._db.run_soon(tokens.load_tokens).result())

    def _add(self, records: list[TokenRecord]) -> None:
        with self._lock:
            self._fresh.extend(records)

    def take(self) -> list[TokenRecord]:
        """The token rows read since the last take, oldest first."""
        with self._lock:
            fresh, self._fresh = self._fresh, []
        return fresh

    def stop(self) -> None:
        self._listener.unhear(ACCESS_CHANNEL)
