"""`SaveBatches`: the executions' saves that wait for the writer thread together, written in one
transaction. A busy fleet's turns start and end in bursts (one prompt to every pane, turns of
the same length), and each transaction writes every page it touched to the WAL: the row's, a
dozen indexes', the tallies'. Twenty rows written together touch about the pages one does.

A save joins the batch waiting to be written, or starts one; the batch is written when the
writer thread comes to it, in the order its saves came. A save that may wait (`within`: a row
of a turn nobody was told of or waits for) starts no write of its own for that long: the turns a
round of prompts starts (or ends) on twenty panes are then one transaction, not twenty; any save
that may not wait takes the waiting ones along at once; the batch is written when the earliest
of its saves is due. A save of an execution whose earlier save still waits takes its place (the
newer record is the whole row): a turn that ends before its `running` row was written is one
row written, not two. If the transaction fails, each row of it is written again on its own, so
one row's failure (a used idempotency key) is only its own.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from muxd.errors import StoreUnavailable
from muxd.executions.record import Execution
from muxd.executions.transcript import Transcript, TranscriptBuffer
from muxd.store.database import Database, driver_error, transaction
from muxd.store.execution_rows import COLUMNS, ROWS_PER_STATEMENT, to_row, upsert_of

# Told on the writer thread how a save went: None (stored), the driver's error (sqlite3's,
# psycopg's: `Database.driver_errors`), or the writer's refusal (a damaged or closed database).
Done = Callable[[Exception | None], None]

# An upsert, which SQLite and PostgreSQL both read (INSERT OR REPLACE is SQLite's alone).
SAVE_TRANSCRIPT = ("INSERT INTO execution_transcripts (execution_id, data, raw_bytes, truncated, extra) "
                   "VALUES (?, ?, ?, ?, ?) ON CONFLICT (execution_id) DO UPDATE SET data = excluded.data, "
                   "raw_bytes = excluded.raw_bytes, truncated = excluded.truncated, extra = excluded.extra")


def save_rows(db: sqlite3.Connection, rows: list[tuple[Execution, Transcript | TranscriptBuffer | None]]) -> None:
    """Each execution (and its transcript, if any, compressed now if it is not yet), in one
    transaction. The rows go in statements of several: a statement opens a cursor on the table
    and each of its indexes once, whatever rows it writes (a quarter of a row's cost, alone)."""
    with transaction(db):
        for part in _statements(rows, _rows_a_statement(db)):
            db.execute(upsert_of(len(part)), [value for execution, _ in part for value in to_row(execution)])
        transcripts = [transcript_row(execution.id, transcript.finish())
                       for execution, transcript in rows if transcript is not None]
        if transcripts:
            db.executemany(SAVE_TRANSCRIPT, transcripts)


def _rows_a_statement(db: sqlite3.Connection) -> int:
    """ROWS_PER_STATEMENT, or fewer where the SQLite library binds fewer parameters a statement
    (999 before its version 3.32)."""
    if not isinstance(db, sqlite3.Connection):
        return ROWS_PER_STATEMENT  # PostgreSQL: 65,535 parameters
    return max(1, min(ROWS_PER_STATEMENT, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // len(COLUMNS)))


def _statements(rows: list[tuple[Execution, Any]], most: int) -> list[list[tuple[Execution, Any]]]:
    """`rows` cut into the parts one statement writes: at most `most`, each id once in a part
    (PostgreSQL refuses an upsert that meets its own row twice; a later save of the same
    execution, written after, is the newer record)."""
    parts: list[list[tuple[Execution, Any]]] = [[]]
    ids: set[str] = set()
    for row in rows:
        if len(parts[-1]) == most or row[0].id in ids:
            parts.append([])
            ids.clear()
        parts[-1].append(row)
        ids.add(row[0].id)
    return [part for part in parts if part]


def transcript_row(execution_id: str, transcript: Transcript) -> tuple[Any, ...]:
    import msgspec

    extra = msgspec.json.encode(transcript.extra).decode() if transcript.extra else None
    return (execution_id, transcript.data, transcript.raw_bytes, int(transcript.truncated), extra)


Saving = tuple[Execution, Transcript | TranscriptBuffer | None, list[Done]]


class SaveBatches:
    def __init__(self, db: Database, after_batch: Callable[[], None] | None = None) -> None:
        self._db = db
        self._after_batch = after_batch  # told once each batch's saves were all told how they went
        self._lock = threading.Lock()  # saves come from the loop, the writer takes them
        self._waiting: dict[str, Saving] = {}  # by execution id, in the order their first saves came
        self._queued = False  # the waiting batch's write is queued on the writer
        self._timer: asyncio.TimerHandle | None = None  # the write of saves that may wait, put off

    def add(self, execution: Execution, transcript: Transcript | TranscriptBuffer | None, done: Done,
            within: float = 0.0) -> None:
        """Queue the save of `execution`, written within `within` seconds (on the loop; 0: as soon
        as the writer comes to it); `done` is told (on the writer thread) how it went."""
        with self._lock:
            earlier = self._waiting.get(execution.id)
            if earlier is None:
                self._waiting[execution.id] = (execution, transcript, [done])
            else:  # (its first save's place in the batch: rows of one id are in order anyway)
                earlier[2].append(done)
                self._waiting[execution.id] = (execution, transcript if transcript is not None else earlier[1],
                                               earlier[2])
            if self._queued:
                return  # the batch's write is queued already
            if within > 0 and self._put_off(within):
                return
            self._queued = True
        self._queue_write()

    def _put_off(self, within: float) -> bool:
        """The waiting batch's write `within` seconds from now at the latest (False: no loop runs here)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        due = loop.time() + within
        if self._timer is not None and self._timer.when() <= due:
            return True
        if self._timer is not None:
            self._timer.cancel()  # a save due sooner than the batch was
        self._timer = loop.call_at(due, self._put_off_ended)
        return True

    def _put_off_ended(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> bool:
        """Queue the write of the saves waiting now (before a write of the writer's that must
        come after them: it runs jobs in the order they were queued); False if none waits."""
        with self._lock:
            if self._queued or not self._waiting:
                return self._queued  # queued already (with a save that could not wait), or nothing waits
            self._queued = True
        self._queue_write()
        return True

    def _queue_write(self) -> None:
        try:
            self._db.run_soon(self._write).add_done_callback(self._refused)
        except RuntimeError:  # the writer was shut down
            self._fail_waiting(StoreUnavailable("the database is closed", reason="closed"))

    def _write(self, db: sqlite3.Connection) -> None:
        with self._lock:
            batch, self._waiting, self._queued = list(self._waiting.values()), {}, False
        try:
            self._write_batch(db, batch)
        finally:
            self._told()

    def _told(self) -> None:
        if self._after_batch is not None:
            self._after_batch()

    @staticmethod
    def _write_batch(db: sqlite3.Connection, batch: list[Saving]) -> None:
        failed = driver_error(db)  # sqlite3.Error, or psycopg's on PostgreSQL
        try:
            save_rows(db, [(execution, transcript) for execution, transcript, _ in batch])
        except Exception as exc:
            if not isinstance(exc, failed):  # no failure of the database: a bug, told as one
                _tell(batch, StoreUnavailable(f"the history write failed: {exc!r}"))
                return
            if len(batch) == 1:
                _tell(batch, exc)
                return
            for saving in batch:  # each on its own: whose failure it is
                try:
                    save_rows(db, [(saving[0], saving[1])])
                except failed as own:
                    _tell([saving], own)
                else:
                    _tell([saving], None)
            return
        _tell(batch, None)

    def _refused(self, job: Future[None]) -> None:
        """The writer did not run the batch's write (the file was found damaged before it): its
        saves are still waiting (`_write` itself never raises)."""
        failure = job.exception()
        if failure is not None:
            self._fail_waiting(failure if isinstance(failure, StoreUnavailable)
                               else StoreUnavailable(f"the history write failed: {failure!r}"))

    def _fail_waiting(self, failure: StoreUnavailable) -> None:
        with self._lock:
            batch, self._waiting, self._queued = list(self._waiting.values()), {}, False
        _tell(batch, failure)
        self._told()


def _tell(batch: list[Saving], outcome: Exception | None) -> None:
    """Each saver of `batch` how its save went."""
    for _, _, dones in batch:
        for done in dones:
            done(outcome)
