"""`PgDatabase`: a PostgreSQL database (MUXD_DB=postgresql://…, issue 30) behind the same calls as
SQLite's `Database` — `call`, `run`, `call_sync`, `run_soon`, `submit`, `close` — so the table
modules' jobs run on it unchanged (a job gets a PgConnection, see pg_connection.py).

One writer thread and one connection, as with SQLite: jobs run in the order they were submitted
(a token written in the background, then its grant; a read after a write sees it). What the
server brings that a file does not:

- the connection can break (the server restarted, the network went): the job that met it fails
  as one `unreachable` line (never run again: its COMMIT may have landed), and the next job
  connects anew, so the database coming back needs no restart of muxd;
- a deadlock or a serialization failure rolled the job's transaction back whole: the job runs
  once more (every store job is a function of its connection alone);
- the busy timeout ($MUXD_DB_BUSY_TIMEOUT_S) is PostgreSQL's lock_timeout on each connection;
- a background write (`submit`: a pane's token, its revocation) that found the database out of
  reach is kept (DB_KEPT_WRITES_MAX at most) and written, in order, as soon as the writer connects
  again, before any later job: other daemons read those rows (a pane's revocation must reach them);
- what other daemons tell (NOTIFY) is heard on one more connection, `listener` (pg_listen.py),
  where each part of the daemon hears its own channel: token changes, actions for this host,
  the fleet's changes.

Imported only for a PostgreSQL URL: psycopg (the extra muxd[postgres]) costs a SQLite start nothing.
"""

from __future__ import annotations

import logging
import functools
import math
from collections import deque
from typing import TypeVar

import psycopg
from psycopg.pq import TransactionStatus

from muxd.config import DB_BUSY_TIMEOUT_S, DB_KEPT_WRITES_MAX
from muxd.errors import StoreUnavailable
from muxd.store import pg_errors
from muxd.store.database import Database, Job
from muxd.store.hosts import use_host
from muxd.store.location import redacted
from muxd.store.pg_connection import PgConnection, connect, network_bounds
from muxd.store.pg_listen import PgListener
from muxd.store.pg_schema import migrate
from muxd.store.sqlite_errors import DAMAGED, one_line

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRIED_SQLSTATES = frozenset({"40P01", "40001"})  # deadlock, serialization failure: rolled back whole


class PgDatabase(Database):
    """The writer thread and its connection to the PostgreSQL database at `url`. Opening raises
    StoreUnavailable when the database cannot be used (unreachable, refused, newer than muxd)."""

    driver_errors = psycopg.Error
    driver_unavailable = staticmethod(pg_errors.unavailable)

    shared = True

    def __init__(self, url: str, *, busy_timeout_s: float = DB_BUSY_TIMEOUT_S, host: str | None = None) -> None:
        self.url = url
        self._conn: PgConnection | None = None
        # Background writes the database could not be reached for, oldest first (the writer's alone).
        self._kept: deque[tuple[Job[object], str]] = deque()
        self._kept_dropped = 0
        super().__init__(redacted(url), busy_timeout_s=busy_timeout_s, host=host)

    @functools.cached_property
    def listener(self) -> PgListener:
        """This database's one LISTEN connection, started at its first use; its parts `hear` on it."""
        return PgListener(self.url).start()

    def refusal_of(self, exc: Exception, doing: str) -> StoreUnavailable:
        """What stops a start when psycopg's `exc` met `doing`: nothing to repair here, as a
        SQLite file may need; the server's own word, in one line."""
        return pg_errors.unavailable(exc, doing)

    def failure_kind(self, exc: Exception) -> tuple[str, str]:
        """(kind, headline) of psycopg's `exc`, for a sampled log line (pg_errors' reading)."""
        return pg_errors.failure_kind(exc)

    def _connect(self) -> PgConnection:
        conn = connect(self.url, **{**network_bounds(), "connect_timeout": max(1, math.ceil(self.busy_timeout_s))})
        conn.execute(f"SET lock_timeout = {max(1, round(self.busy_timeout_s * 1000))}")
        use_host(conn, self.host)  # what muxd_host() answers: the rows this daemon writes say its host
        return conn

    def connect_reader(self) -> PgConnection:  # type: ignore[override]  # a PgConnection stands for sqlite3's
        """A new connection whose transactions only read (the history's reads, readers.py), with the
        writer's timeouts; StoreUnavailable when it cannot connect."""
        try:
            conn = self._connect()
            conn.execute("SET default_transaction_read_only = on")
        except psycopg.Error as exc:
            raise pg_errors.unavailable(exc, f"connecting to {self.path}") from exc
        return conn

    def _open(self, check_max_s: float) -> None:
        """Connect and migrate (on the writer thread); nothing to check: the server owns its files."""
        try:
            conn = self._connect()
        except psycopg.Error as exc:
            raise pg_errors.unavailable(exc, f"opening {self.path}") from exc
        try:
            migrate(conn)
        except psycopg.Error as exc:
            conn.close()
            raise pg_errors.unavailable(exc, f"migrating {self.path}") from exc
        except BaseException:
            conn.close()
            raise
        self._conn = self._db = conn  # type: ignore[assignment]  # _db: what Database.close closes

    def _connection(self) -> PgConnection:
        """The open connection, or a new one if the last broke."""
        if self._conn is None or self._conn.raw.closed:
            try:
                self._conn = self._connect()
            except psycopg.Error as exc:
                raise pg_errors.unavailable(exc, f"connecting to {self.path}") from exc
            self._db = self._conn  # type: ignore[assignment]
            log.info("connected to the database again: %s", self.path)
            self._write_kept(self._conn)
            for callback in self._on_reconnect:
                try:
                    callback()
                except Exception:  # noqa: BLE001 - a receiver's fault never fails the job
                    log.exception("telling of the database's return")
        elif self._kept:  # kept by a failure that left the connection open: tried again before each job
            self._write_kept(self._conn)
        return self._conn

    def _settle(self, conn: PgConnection) -> None:
        """After a failed job: a broken connection is dropped (the next job connects anew), an
        open transaction rolled back (the next job starts clean)."""
        if conn.raw.broken:
            conn.close()
            return
        if conn.raw.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            conn.execute("ROLLBACK")

    def _call(self, job: Job[T]) -> T:
        if self.problem is not None:
            raise StoreUnavailable(self.problem, reason=DAMAGED, path=self.path)
        retried = False
        while True:
            conn = self._connection()
            try:
                return job(conn)  # type: ignore[arg-type]  # a PgConnection stands for sqlite3's
            except (psycopg.Error, StoreUnavailable) as exc:
                cause = exc.__cause__ if isinstance(exc, StoreUnavailable) else exc
                try:
                    self._settle(conn)
                except psycopg.Error:
                    conn.close()
                if not retried and pg_errors.sqlstate(cause) in RETRIED_SQLSTATES:
                    retried = True
                    continue
                if isinstance(exc, StoreUnavailable):
                    self.check_damage(exc)
                raise

    # ------------------------------------------------------------ background writes kept

    def _call_in_background(self, job: Job[object], what: str) -> object:
        try:
            return self._call(job)
        except (psycopg.Error, StoreUnavailable) as exc:
            if not _unreachable(exc):
                raise
            self._keep(job, what, exc)
            return None

    def _keep(self, job: Job[object], what: str, exc: Exception) -> None:
        if not self._kept:
            log.error("the database cannot be reached: background writes are kept and written when it can "
                      "(%s: %s)", what, exc.message if isinstance(exc, StoreUnavailable) else one_line(exc))
        self._kept.append((job, what))
        if len(self._kept) > DB_KEPT_WRITES_MAX:
            self._kept.popleft()
            self._kept_dropped += 1

    def _write_kept(self, conn: PgConnection) -> None:
        """Run the kept writes on `conn`, just connected, in order; those a new break stops stay kept."""
        written = 0
        while self._kept and not conn.gone:
            job, what = self._kept[0]
            try:
                job(conn)  # type: ignore[arg-type]  # a PgConnection stands for sqlite3's
            except Exception as exc:  # noqa: BLE001 - one write's failure is its own: the next are written
                try:
                    self._settle(conn)
                except psycopg.Error:
                    conn.close()
                if _unreachable(exc):
                    return  # broke again: the rest wait for the next connection
                log.error("database write failed (%s): %s", what, getattr(exc, "message", None) or one_line(exc))
            else:
                written += 1
            self._kept.popleft()
        if written or self._kept_dropped:
            lost = f"; {self._kept_dropped} more, past {DB_KEPT_WRITES_MAX}, were dropped" if self._kept_dropped else ""
            log.info("wrote %d background write(s) kept while the database could not be reached%s", written, lost)
            self._kept_dropped = 0

    def _last_try(self) -> None:
        """At close: the kept writes written if the database can be reached now, else named as lost."""
        if not self._kept:
            return
        try:
            self._connection()
        except StoreUnavailable:
            pass
        if self._kept:
            log.error("%d background write(s) the database could not take are lost (%s …)", len(self._kept),
                      ", ".join(what for _, what in list(self._kept)[:3]))

    def close(self) -> None:
        if "listener" in self.__dict__:
            self.listener.stop()
        if not self.closed:
            try:
                self._executor.submit(self._last_try)  # queued before the base's close of the connection
            except RuntimeError:
                pass
        super().close()


def _unreachable(exc: Exception) -> bool:
    """Whether `exc` (psycopg's, or muxd's made of it) says the database could not be reached."""
    if isinstance(exc, StoreUnavailable):
        return exc.detail.get("reason") == pg_errors.UNREACHABLE
    return pg_errors.failure_kind(exc)[0] == pg_errors.UNREACHABLE
