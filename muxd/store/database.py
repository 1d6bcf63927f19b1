"""One SQLite file per server, written only through a single writer thread.

Every write runs on that thread, in submission order: the loop never blocks on the disk,
writes never contend, and a read submitted after a write sees it. The execution history also
reads through read-only connections of its own (readers.py), so its queries never wait behind
a write. Migrations run at open, keyed on `PRAGMA user_version`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from muxd.config import DB_BUSY_TIMEOUT_S, DB_DIR_MODE, DB_FILE_MODE, STORE_CLOSE_TIMEOUT_S
from muxd.errors import Internal
from muxd.store.location import MEMORY
from muxd.store.schema import MIGRATIONS

log = logging.getLogger(__name__)
T = TypeVar("T")
Job = Callable[[sqlite3.Connection], T]


def _create_private(path: str) -> None:
    """Make the directory 0700 and the file 0600 before SQLite opens it (it keeps the mode)."""
    directory = Path(path).parent
    directory.mkdir(mode=DB_DIR_MODE, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, DB_FILE_MODE)
    os.close(fd)
    os.chmod(path, DB_FILE_MODE)


@contextmanager
def transaction(db: sqlite3.Connection, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
    """BEGIN … COMMIT (ROLLBACK on error) on an autocommit connection.

    `immediate` takes the write lock at BEGIN: a transaction that reads then writes (a claim)
    must, when other connections write the same file — a deferred one that read first cannot
    take the lock later once another writer committed (SQLITE_BUSY, which no timeout cures)."""
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
    """The writer thread and its connection. `run(job)` awaits a job; `submit(job)` queues one."""

    def __init__(self, path: str, *, busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="muxd-db")
        self._db: sqlite3.Connection | None = None
        try:
            self._executor.submit(self._open).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise

    def _open(self) -> None:
        if self.path != MEMORY:
            _create_private(self.path)
        db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                             check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        migrate(db)
        self._db = db

    def _call(self, job: Job[T]) -> T:
        assert self._db is not None
        return job(self._db)

    def call_sync(self, job: Job[T]) -> T:
        """Run `job` on the writer thread and wait (start-up only, before the loop serves)."""
        return self._executor.submit(self._call, job).result()

    async def run(self, job: Job[T]) -> T:
        """Run `job` on the writer thread without blocking the loop; its exception propagates."""
        return await asyncio.wrap_future(self._executor.submit(self._call, job))

    def submit(self, job: Job[object], what: str) -> None:
        """Queue a write whose outcome nobody waits for; a failure is logged, never raised."""
        future = self._executor.submit(self._call, job)

        def report(done: concurrent.futures.Future[object]) -> None:
            exc = done.exception()
            if exc is not None:
                log.error("database write failed (%s): %r", what, exc)

        future.add_done_callback(report)

    def close(self) -> None:
        """Finish the queued writes (bounded), then close the file."""
        def shut(db: sqlite3.Connection) -> None:
            db.close()

        try:
            self._executor.submit(self._call, shut).result(timeout=STORE_CLOSE_TIMEOUT_S)
        except (concurrent.futures.TimeoutError, sqlite3.Error) as exc:
            log.error("closing the database: %r", exc)
        self._executor.shutdown(wait=False)
