"""`SaveBatches`: the executions' saves that wait for the writer thread together, written in one
transaction. A busy fleet's turns start and end in bursts (one prompt to every pane, turns of
the same length), and each transaction writes every page it touched to the WAL: the row's, a
dozen indexes', the tallies'. Twenty rows written together touch about the pages one does.

A save joins the batch waiting to be written, or starts one; the batch is written when the
writer thread comes to it, in the order its saves came. If the transaction fails, each row of
it is written again on its own, so one row's failure (a used idempotency key) is only its own.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from muxd.errors import StoreUnavailable
from muxd.executions.record import Execution
from muxd.executions.transcript import Transcript, TranscriptBuffer
from muxd.store.database import Database, transaction
from muxd.store.execution_rows import UPSERT, to_row

# Told on the writer thread how a save went: None (stored), the driver's error (sqlite3's,
# psycopg's: `Database.driver_errors`), or the writer's refusal (a damaged or closed database).
Done = Callable[[Exception | None], None]

# An upsert, which SQLite and PostgreSQL both read (INSERT OR REPLACE is SQLite's alone).
SAVE_TRANSCRIPT = ("INSERT INTO execution_transcripts (execution_id, data, raw_bytes, truncated, extra) "
                   "VALUES (?, ?, ?, ?, ?) ON CONFLICT (execution_id) DO UPDATE SET data = excluded.data, "
                   "raw_bytes = excluded.raw_bytes, truncated = excluded.truncated, extra = excluded.extra")


def save_rows(db: sqlite3.Connection, rows: list[tuple[Execution, Transcript | TranscriptBuffer | None]]) -> None:
    """Each execution (and its transcript, if any, compressed now if it is not yet), in one transaction."""
    with transaction(db):
        for execution, transcript in rows:
            db.execute(UPSERT, to_row(execution))
            if transcript is not None:
                db.execute(SAVE_TRANSCRIPT, transcript_row(execution.id, transcript.finish()))


def transcript_row(execution_id: str, transcript: Transcript) -> tuple[Any, ...]:
    import msgspec

    extra = msgspec.json.encode(transcript.extra).decode() if transcript.extra else None
    return (execution_id, transcript.data, transcript.raw_bytes, int(transcript.truncated), extra)


class SaveBatches:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()  # saves come from the loop, the writer takes them
        self._waiting: list[tuple[Execution, Transcript | TranscriptBuffer | None, Done]] = []

    def add(self, execution: Execution, transcript: Transcript | TranscriptBuffer | None, done: Done) -> None:
        """Queue the save of `execution`; `done` is told (on the writer thread) how it went."""
        with self._lock:
            self._waiting.append((execution, transcript, done))
            if len(self._waiting) > 1:
                return  # the batch's write is queued already
        try:
            self._db.run_soon(self._write).add_done_callback(self._refused)
        except RuntimeError:  # the writer was shut down
            self._fail_waiting(StoreUnavailable("the database is closed", reason="closed"))

    def _write(self, db: sqlite3.Connection) -> None:
        with self._lock:
            batch, self._waiting = self._waiting, []
        try:
            save_rows(db, [(execution, transcript) for execution, transcript, _ in batch])
        except Exception as exc:
            if not isinstance(exc, self._db.driver_errors):  # no failure of the database: a bug, told as one
                for _, _, done in batch:
                    done(StoreUnavailable(f"the history write failed: {exc!r}"))
                return
            if len(batch) == 1:
                batch[0][2](exc)
                return
            for execution, transcript, done in batch:  # each on its own: whose failure it is
                try:
                    save_rows(db, [(execution, transcript)])
                except self._db.driver_errors as own:
                    done(own)
                else:
                    done(None)
            return
        for _, _, done in batch:
            done(None)

    def _refused(self, job: Future[None]) -> None:
        """The writer did not run the batch's write (the file was found damaged before it): its
        saves are still waiting (`_write` itself never raises)."""
        failure = job.exception()
        if failure is not None:
            self._fail_waiting(failure if isinstance(failure, StoreUnavailable)
                               else StoreUnavailable(f"the history write failed: {failure!r}"))

    def _fail_waiting(self, failure: StoreUnavailable) -> None:
        with self._lock:
            batch, self._waiting = self._waiting, []
        for _, _, done in batch:
            done(failure)
