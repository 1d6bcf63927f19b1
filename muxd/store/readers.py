"""Read-only connections to one database, each on its own thread: reads wait neither on the
event loop nor behind the writer thread. On a SQLite file in WAL mode readers and the one writer
work at once, each reader on the snapshot of the last commit when its statement began; on
PostgreSQL (issue 30) each reader is a connection of its own, read-only by default, that
`Database.connect_reader` opens."""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

T = TypeVar("T")
Job = Callable[[sqlite3.Connection], T]
_Work = tuple[Callable[[sqlite3.Connection], Any], "concurrent.futures.Future[Any]"]


def connect_read_only(path: str, *, busy_timeout_s: float) -> sqlite3.Connection:
    """A connection that cannot write `path` (mode=ro, and query_only should the URI be ignored)."""
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, isolation_level=None)
    db.execute("PRAGMA query_only=1")
    return db


class ReaderPool:
    """`threads` threads sharing one queue of jobs; each opens its connection with `connect` at
    its first job (again after a failed open, or after a job found it broken) and closes it at
    `close()`."""

    def __init__(self, connect: Callable[[], Any], *, threads: int) -> None:
        self._connect = connect
        self._jobs: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._closed = False
        self._threads = [threading.Thread(target=self._serve, name=f"muxd-db-read-{n}", daemon=True)
                         for n in range(threads)]
        for thread in self._threads:
            thread.start()

    async def run(self, job: Job[T]) -> T:
        """Run `job` on a reader's connection without blocking the loop; its exception propagates."""
        if self._closed:
            raise RuntimeError("the reader pool is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((job, future))
        return await asyncio.wrap_future(future)

    def _serve(self) -> None:
        db: Any = None
        try:
            while (work := self._jobs.get()) is not None:
                job, future = work
                if not future.set_running_or_notify_cancel():
                    continue
                for last_try in (False, True):
                    try:
                        if db is None:
                            db = self._connect()
                        future.set_result(job(db))
                        break
                    except BaseException as exc:
                        # A connection that broke (PostgreSQL's: a server that restarted while it
                        # sat idle) is dropped, and the read, which changes nothing, runs once
                        # more on a new one; any other failure is the caller's to see.
                        broke = getattr(db, "gone", False)
                        if broke:
                            db.close()
                            db = None
                        if not broke or last_try:
                            future.set_exception(exc)
                            break
        finally:
            if db is not None:
                db.close()

    def close(self, timeout_s: float) -> None:
        """Let the queued reads finish (within `timeout_s` per thread), then close the connections."""
        if self._closed:
            return
        self._closed = True
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join(timeout_s)
