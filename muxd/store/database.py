"""One SQLite file per server, written only through a single writer thread.

Every write runs on that thread, in submission order: the loop never blocks on the disk,
writes never contend, and a read submitted after a write sees it. The execution history also
reads through read-only connections of its own (readers.py), so its queries never wait behind
a write. Migrations run at open, keyed on `PRAGMA user_version`.

A damaged file is refused, never replaced: at open (its structure checked first, within
DB_OPEN_CHECK_MAX_S) with `StoreUnavailable`, which stops the daemon's start; while serving,
the first SQLITE_CORRUPT / SQLITE_NOTADB sets `problem` and every job after it is refused, so
nothing more is acknowledged that the file may not keep.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from muxd.config import DB_BUSY_TIMEOUT_S, DB_DIR_MODE, DB_FILE_MODE, DB_OPEN_CHECK_MAX_S, STORE_CLOSE_TIMEOUT_S
from muxd.errors import BadRequest, Internal, StoreUnavailable
from muxd.store.location import MEMORY
from muxd.store.readers import connect_read_only
from muxd.store.hosts import check_host, host_from_env, use_host
from muxd.store.schema import MIGRATIONS
from muxd.store.sqlite_errors import DAMAGED, failure_kind, is_damage, one_line, unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")
Job = Callable[[sqlite3.Connection], T]
_CHECK_PROGRESS_STEPS = 10_000  # SQLite VM steps between looks at the clock during the check
_SQLITE_INTERRUPT = 9
ENV_BUSY_TIMEOUT = "MUXD_DB_BUSY_TIMEOUT_S"
DATABASE_NOW = "extract(epoch FROM now())::float8"  # PostgreSQL's clock (the transaction's start), epoch seconds


def seconds_from_env(env: Mapping[str, str], name: str, default: float) -> float:
    """The seconds $`name` asks for (unset or empty: `default`); bad_request names the variable
    when it is not a number above 0."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):  # nan too
        raise BadRequest(f"{name} must be a number of seconds above 0, got {text!r}")
    return value


def busy_timeout_from_env(env: Mapping[str, str]) -> float:
    """The busy timeout $MUXD_DB_BUSY_TIMEOUT_S asks for, in seconds (unset or empty:
    DB_BUSY_TIMEOUT_S); bad_request names the variable when it is not a number above 0."""
    return seconds_from_env(env, ENV_BUSY_TIMEOUT, DB_BUSY_TIMEOUT_S)


def damage_notice(path: str, found: str, *, serving: bool) -> str:
    """One line saying the file at `path` is damaged (`found`), and what to do about it."""
    now = "nothing more is written to it" if serving else "muxd will not start on it"
    then = "restart the server" if serving else "start the server again"
    return (f"the database {path} is damaged ({found}); {now}: move it aside (with its -wal and -shm "
            f"files) or restore it from a backup, then {then}")



def refusal(exc: sqlite3.Error, path: str, doing: str) -> StoreUnavailable:
    """What stops a start on `path` when `exc` met `doing`: damage says what to do about it."""
    if failure_kind(exc)[0] == DAMAGED:
        return StoreUnavailable(damage_notice(path, one_line(exc), serving=False), reason=DAMAGED,
                                path=path)
    return unavailable(exc, doing)


def check_structure(db: sqlite3.Connection, path: str, max_s: float) -> None:
    """StoreUnavailable (reason corrupt) if `PRAGMA quick_check` finds damage in `path`; a check
    that takes longer than `max_s` stops there (logged): what it did not reach is found when met."""
    deadline = time.monotonic() + max_s
    db.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_PROGRESS_STEPS)
    try:
        found = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode != _SQLITE_INTERRUPT:
            raise
        log.warning("checked the database %s for %.0f s, not to its end: damage further in is found "
                    "when it is read", path, max_s)
        return
    finally:
        db.set_progress_handler(None, 0)
    if found != "ok":
        problem = " ".join(str(found).replace("*** in database main ***", "").split())
        raise StoreUnavailable(damage_notice(path, problem, serving=False), reason=DAMAGED, path=path)


def _create_private(path: str) -> None:
    """Make the directory 0700 and the file 0600 before SQLite opens it (it keeps the mode)."""
    directory = Path(path).parent
    directory.mkdir(mode=DB_DIR_MODE, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, DB_FILE_MODE)
    os.close(fd)
    os.chmod(path, DB_FILE_MODE)


def is_postgres(c: object) -> bool:
    """Whether `c` is a PostgreSQL connection (store/pg_connection.PgConnection), not sqlite3's.
    Here, not there: the SQLite daemon's start never loads that module."""
    return getattr(c, "postgres", False) is True


def driver_error(c: object) -> type[Exception]:
    """The root of the errors `c`'s driver raises (sqlite3.Error, or psycopg.Error)."""
    return getattr(c, "driver_error", sqlite3.Error)


def lock_clause(c: object, table: str, *, skip_locked: bool = False) -> str:
    """' FOR UPDATE OF `table`' for a read of rows that an immediate transaction (below) on
    PostgreSQL will move (`skip_locked`: rows another transaction holds are left to it); ''
    on SQLite, whose immediate transaction holds the whole file already."""
    if not (is_postgres(c) and getattr(c, "locking", False)):
        return ""
    return f" FOR UPDATE OF {table}{' SKIP LOCKED' if skip_locked else ''}"


def judged_now(c: object, now: float) -> float:
    """The time a task's move is judged and stamped by: on PostgreSQL the database's clock (now(),
    the transaction's start), so daemons on hosts whose clocks disagree agree on when a lease runs
    out; on SQLite `now`, the caller's, the clock of the one machine its file is on. A connection
    whose `database_clock` is off (tests that pin the time) takes `now` on PostgreSQL too."""
    if not getattr(c, "database_clock", False):
        return now
    began: float | None = getattr(c, "began_at", None)  # read with the transaction's BEGIN
    if began is not None:
        return began
    return float(c.execute(f"SELECT {clock_sql(c)}").fetchone()[0])  # type: ignore[attr-defined]


def clock_sql(c: object) -> str:
    """SQL for judged_now's time, where a statement compares with it: the database's clock, or
    `?` (a parameter: the caller's `now`)."""
    return DATABASE_NOW if getattr(c, "database_clock", False) else "?"


@contextmanager
def transaction(db: sqlite3.Connection, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
    """BEGIN … COMMIT (ROLLBACK on error) on an autocommit connection.

    `immediate` takes the write lock at BEGIN: a transaction that reads then writes (a claim)
    must, when other connections write the same file — a deferred one that read first cannot
    take the lock later once another writer committed (SQLITE_BUSY, which no timeout cures).
    On PostgreSQL (a PgConnection) it locks the rows the transaction reads to move instead."""
    if is_postgres(db):
        with db.transaction(immediate=immediate):  # type: ignore[attr-defined]
            yield db
        return
    db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield db
    except BaseException:
        # SQLite itself rolls back on some errors (SQLITE_FULL); a second ROLLBACK would fail
        # and hide the error that matters.
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def migrate(db: sqlite3.Connection) -> int:
    """Apply the migrations not yet applied; returns the schema version now."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise Internal(f"the database has schema version {version}, newer than this muxd "
                       f"({len(MIGRATIONS)})", version=version)
    for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
        db.executescript(f"BEGIN; {script}; PRAGMA user_version = {number}; COMMIT;")
    return len(MIGRATIONS)


class Database:
    """The writer thread and its connection. `call(job, doing)` awaits a job, SQLite's errors
    as `StoreUnavailable`; `submit(job)` queues one nobody awaits.

    Opening raises StoreUnavailable when the file cannot be used (damaged, locked, unreadable).
    PostgreSQL's (pg_database.py) is this class with its own driver's errors, opening and jobs."""

    # The driver's errors, and the one-line StoreUnavailable each becomes (`call`).
    driver_errors: type[Exception] | tuple[type[Exception], ...] = sqlite3.Error
    driver_unavailable = staticmethod(unavailable)

    # Whether other daemons may share this database (PostgreSQL's may: pane principals name
    # their host there, daemon/access/control.py).
    shared = False
    # Where what the other daemons tell is heard (PostgreSQL's NOTIFY: pg_listen.PgListener, one
    # connection each part `hear`s its channel on); a file nobody else writes tells nothing.
    listener: Any = None  # (not imported here: pg_listen needs psycopg, and imports this module)

    def __init__(self, path: str, *, busy_timeout_s: float = DB_BUSY_TIMEOUT_S,
                 check_max_s: float = DB_OPEN_CHECK_MAX_S, host: str | None = None) -> None:
        self.path = path
        # The host recorded on the rows this daemon writes ($MUXD_HOST; store/hosts.py).
        self.host = host_from_env(os.environ) if host is None else check_host(host, "the host")
        self.busy_timeout_s = busy_timeout_s
        # Set (once, on the writer thread) when the file turns out damaged while serving.
        self.problem: str | None = None
        self.closed = False
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="muxd-db")
        self._db: sqlite3.Connection | None = None
        # Told on the writer thread when a connection that broke is made again (PostgreSQL's).
        self._on_reconnect: list[Callable[[], None]] = []
        try:
            self._executor.submit(self._open, check_max_s).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise

    def when_reconnected(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the writer thread: it must only hand over) each time the database
        can be used again after its connection broke; a SQLite file never does."""
        self._on_reconnect.append(callback)

    @property
    def principal_host(self) -> str | None:
        """The host pane principals name (hosts.pane_principal): this one on a database daemons
        share; None on SQLite's, whose principals stay as they were (agent:%3)."""
        return self.host if self.shared else None

    def _open(self, check_max_s: float) -> None:
        doing = f"opening {self.path}"
        try:
            if self.path != MEMORY:
                _create_private(self.path)
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                                 check_same_thread=False)
            use_host(db, self.host)
        except OSError as exc:
            raise StoreUnavailable(f"the database cannot be opened: {doing}: {exc.strerror or exc}",
                                   reason="cant_open", path=self.path) from exc
        except sqlite3.Error as exc:
            raise unavailable(exc, doing) from exc
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            if self.path != MEMORY:
                check_structure(db, self.path, check_max_s)
            migrate(db)
        except sqlite3.Error as exc:
            db.close()
            raise refusal(exc, self.path, doing) from exc
        except BaseException:
            db.close()
            raise
        self._db = db

    def connect_reader(self) -> sqlite3.Connection:
        """A new connection that only reads this database (readers.py's, for the history's reads);
        StoreUnavailable when it cannot be opened."""
        try:
            return connect_read_only(self.path, busy_timeout_s=self.busy_timeout_s)
        except sqlite3.Error as exc:
            raise unavailable(exc, f"opening {self.path} to read") from exc

    def _call(self, job: Job[T]) -> T:
        assert self._db is not None
        if self.problem is not None:
            raise StoreUnavailable(self.problem, reason=DAMAGED, path=self.path)
        try:
            return job(self._db)
        except (sqlite3.Error, StoreUnavailable) as exc:
            self.check_damage(exc)
            raise

    def refusal_of(self, exc: Exception, doing: str) -> StoreUnavailable:
        """What stops a start when the driver's `exc` met `doing` (`refusal`, for this database)."""
        assert isinstance(exc, sqlite3.Error)
        return refusal(exc, self.path, doing)

    def failure_kind(self, exc: Exception) -> tuple[str, str]:
        """(kind, headline) of the driver's `exc`, for a sampled log line (sqlite_errors' reading)."""
        return failure_kind(exc)  # type: ignore[arg-type]  # any other error reads as the other kind

    def check_damage(self, exc: sqlite3.Error | StoreUnavailable) -> None:
        """If `exc` says the file is damaged, raise the error that says so and what to do, and
        remember it: every job after this one is refused. Else return."""
        if not is_damage(exc):
            return
        if self.problem is None:
            found = exc.detail.get("found") if isinstance(exc, StoreUnavailable) else None
            self.problem = damage_notice(self.path, found or one_line(exc), serving=True)
            log.error("%s", self.problem)
        raise StoreUnavailable(self.problem, reason=DAMAGED, path=self.path) from exc

    def call_sync(self, job: Job[T]) -> T:
        """Run `job` on the writer thread and wait (start-up only, before the loop serves)."""
        return self._executor.submit(self._call, job).result()

    async def run(self, job: Job[T]) -> T:
        """Run `job` on the writer thread without blocking the loop; its exception propagates."""
        return await asyncio.wrap_future(self._executor.submit(self._call, job))

    async def call(self, job: Job[T], doing: str) -> T:
        """`run(job)`, with SQLite's failures (and a closed database) as one StoreUnavailable line
        that says what was being done ("revoking token tk-…")."""
        def guarded(db: sqlite3.Connection) -> T:
            try:
                return job(db)
            except self.driver_errors as exc:
                raise self.driver_unavailable(exc, doing) from exc

        try:
            return await self.run(guarded)
        except RuntimeError as exc:  # the writer was shut down
            raise StoreUnavailable(f"the database is closed: {doing}", reason="closed") from exc

    def run_soon(self, job: Job[T]) -> concurrent.futures.Future[T]:
        """Queue `job` on the writer thread; its future (for a caller that is not on the loop)."""
        return self._executor.submit(self._call, job)

    def submit(self, job: Job[object], what: str) -> None:
        """Queue a write whose outcome nobody waits for; a failure is logged, never raised.
        PostgreSQL's keeps one it could not send and writes it again later: such a job must be
        safe to run twice (ON CONFLICT, UPDATE … IS NULL, DELETE)."""
        future = self._executor.submit(self._call_in_background, job, what)

        def report(done: concurrent.futures.Future[object]) -> None:
            exc = done.exception()
            if exc is not None:
                log.error("database write failed (%s): %r", what, exc)

        future.add_done_callback(report)

    def _call_in_background(self, job: Job[object], what: str) -> object:
        """A submitted job, on the writer thread."""
        return self._call(job)

    def close(self) -> None:
        """Finish the queued writes (bounded), then close the file (a damaged one too); once."""
        if self.closed:
            return
        self.closed = True

        def shut() -> None:
            assert self._db is not None
            self._db.close()

        try:
            self._executor.submit(shut).result(timeout=STORE_CLOSE_TIMEOUT_S)
        except (concurrent.futures.TimeoutError, sqlite3.Error) as exc:
            log.error("closing the database: %r", exc)
        self._executor.shutdown(wait=False)
