"""`SqliteExecutionStore`: the execution history in the server's SQLite file.

Writes go through the `Database` writer thread, in submission order. Reads run on a small pool
of read-only connections (`ReaderPool`), so a long write never delays a read and the loop
never waits on the disk; an in-memory database has no second connection, so there reads
queue on the writer. Every error of the database's driver reaches callers as one
`StoreUnavailable` line (a used idempotency key as `Conflict`).

The same store runs on PostgreSQL (a `PgDatabase`, MUXD_DB=postgresql://…, issue 30): its SQL
is shared, the read queries' few SQLite-only words rewritten by pg_history_sql.py. Its reads
have a pool of their own too, of read-only connections, rather than queueing on the writer:
there the writer may wait on another daemon's row locks (up to the busy timeout) and on the
network, and the history's reads (`muxd history`, an orchestrator polling its agents) must not
wait behind that.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from muxd.config import (HISTORY_PRUNE_BATCH_ROWS, HISTORY_READER_THREADS,
                         HISTORY_WRITE_FAILURE_LOG_INTERVAL_S, STORE_CLOSE_TIMEOUT_S)
from muxd.errors import Conflict, StoreUnavailable
from muxd.executions.record import Execution, ExecutionError, finished
from muxd.executions.transcript import Transcript, TranscriptBuffer
from muxd.store.database import Database, is_postgres, transaction
from muxd.store import execution_queries as queries
from muxd.store import execution_tallies as tallies
from muxd.store import execution_timeline
from muxd.store.execution_rows import ACTIVE_ROWS, ENDED_ROWS, READ_COLUMNS, UPSERT, from_row, to_row
from muxd.store.save_batches import SAVE_TRANSCRIPT, SaveBatches, save_rows, transcript_row
from muxd.store.execution_store import AgentStats, ErrorPattern, ExecutionQuery, Scope, TimeBucket
from muxd.store.hosts import OWN_ROWS
from muxd.store.location import MEMORY, is_database_url
from muxd.executions.fingerprint import stack_hash
from muxd.sampled_log import SampledLog
from muxd.store import short_ids
from muxd.store.readers import ReaderPool
from muxd.store.settlements import Settlements
from muxd.store.short_ids import EXECUTION_IDS

log = logging.getLogger(__name__)
T = TypeVar("T")
Job = Callable[[sqlite3.Connection], T]

INTERRUPTED_MESSAGE = "the daemon stopped while it ran"
_extra_decoder = msgspec.json.Decoder(dict[str, Any])




def _broke_constraint(exc: BaseException) -> bool:
    """Whether the driver's `exc` is a broken constraint (sqlite3's IntegrityError; SQLSTATE class
    23 from PostgreSQL)."""
    return isinstance(exc, sqlite3.IntegrityError) or str(getattr(exc, "sqlstate", None) or "").startswith("23")


class SqliteExecutionStore:
    """The `ExecutionStore` of one server's database. `db` stays the caller's: `close()` stops
    the readers, not the writer."""

    def __init__(self, db: Database, *, reader_threads: int = HISTORY_READER_THREADS,
                 prune_batch_rows: int = HISTORY_PRUNE_BATCH_ROWS,
                 failure_log_interval_s: float = HISTORY_WRITE_FAILURE_LOG_INTERVAL_S) -> None:
        self._db = db
        self._readers = None if db.path == MEMORY else ReaderPool(db.connect_reader, threads=reader_threads)
        self._text: Callable[[str], str] = str  # the read queries' SQL as the database reads it
        self._postgres = is_database_url(db.path)
        if self._postgres:
            from muxd.store.pg_history_sql import postgres_text

            self._text = postgres_text
        self._prune_batch_rows = prune_batch_rows
        self._failure_log_interval_s = failure_log_interval_s
        self._failure_logs: dict[str, SampledLog] = {}
        self._failure_logs_lock = threading.Lock()  # save_soon's failures are reported on the writer thread
        self._settlements = Settlements()  # saves' outcomes to the loop, a batch's in one wake-up
        # Saves waiting for the writer together: one transaction.
        self._batches = SaveBatches(db, after_batch=self._settlements.hand_over)
        self._refused_log = SampledLog(log, logging.ERROR, "history write refused",
                                       interval_s=failure_log_interval_s)

    # ------------------------------------------------------------------ plumbing

    def _muxd_error(self, exc: Exception, doing: str) -> Conflict | StoreUnavailable:
        """The driver's error as muxd's."""
        if _broke_constraint(exc) and "idempotency" in str(exc):
            # The one constraint a caller can break: an idempotency key already used by another id
            # (SQLite names its columns, PostgreSQL its index executions_idempotency_scoped).
            return Conflict(f"{doing}: another execution has this idempotency key")
        return self._db.driver_unavailable(exc, doing)

    def _guarded(self, job: Job[T], doing: str) -> Job[T]:
        """`job` with the driver's errors turned into muxd's (raised on the thread that ran it)."""
        def run(db: sqlite3.Connection) -> T:
            try:
                return job(db)
            except self._db.driver_errors as exc:
                raise self._muxd_error(exc, doing) from exc
        return run

    def _sql(self, built: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
        """A read query of execution_queries / execution_tallies, in the database's words."""
        sql, params = built
        return self._text(sql), params

    async def _write(self, job: Job[T], doing: str) -> T:
        return await self._db.call(self._guarded(job, doing), doing)  # a closed writer too is StoreUnavailable

    async def _read(self, job: Job[T], doing: str) -> T:
        guarded = self._guarded(job, doing)
        try:
            if self._readers is None:
                return await self._db.run(guarded)
            return await self._readers.run(guarded)
        except StoreUnavailable as exc:  # damage a reader meets is the whole file's (Database.problem)
            self._db.check_damage(exc)
            raise
        except RuntimeError as exc:
            raise StoreUnavailable(f"the database is closed: {doing}") from exc

    def _write_failed(self, exc: Exception, doing: str) -> None:
        kind, headline = self._db.failure_kind(exc)
        with self._failure_logs_lock:
            sampled = self._failure_logs.get(kind)
            if sampled is None:
                sampled = self._failure_logs[kind] = SampledLog(
                    log, logging.ERROR, f"history write failed: {headline}",
                    interval_s=self._failure_log_interval_s)
            sampled.event(f": {doing}: {' '.join(str(exc).split())}")

    # ------------------------------------------------------------------ writes

    async def save(self, execution: Execution, transcript: Transcript | TranscriptBuffer | None = None, *,
                   within: float = 0.0) -> None:
        """Insert or replace by id (with its transcript, in the same transaction); back once
        stored. Written with the other saves that wait for the writer then (SaveBatches), or
        that come within `within` seconds."""
        await self.saving(execution, transcript, within=within)

    def saving(self, execution: Execution, transcript: Transcript | TranscriptBuffer | None = None, *,
               within: float = 0.0) -> asyncio.Future[None]:
        """`save`, as a future of the loop that is done once the row is stored (or failed with
        the StoreUnavailable that says why): for a caller that goes on in a callback, not a task."""
        doing = f"saving {execution.id}"
        loop = asyncio.get_running_loop()
        stored: asyncio.Future[None] = loop.create_future()

        def done(failure: Exception | None) -> None:  # on the writer thread
            error: Exception | None = None
            if isinstance(failure, self._db.driver_errors):
                try:
                    self._db.check_damage(failure)  # type: ignore[arg-type]  # a damaged file refuses every write after it
                    error = self._muxd_error(failure, doing)
                except StoreUnavailable as damaged:
                    error = damaged
            elif failure is not None:
                error = failure
            self._settlements.add(loop, stored, error)  # handed over once the batch is done

        self._batches.add(execution, transcript, done, within)
        return stored

    async def save_many(self, rows: list[tuple[Execution, Transcript | None]]) -> None:
        """`save` each (execution, transcript) of `rows`, all in one transaction."""
        self._batches.flush()  # saves put off before these are written before them
        await self._write(lambda db: save_rows(db, rows), f"saving {len(rows)} execution(s)")

    async def written(self) -> None:
        """Back once every save made so far is written: a query after it sees the rows put off."""
        if self._batches.flush():  # (the writer runs its jobs in order: this one after the batch)
            await self._write(lambda db: None, "writing the saves put off")

    def save_soon(self, execution: Execution,
                  on_failed: Callable[[Execution, StoreUnavailable], None] | None = None, *, within: float = 0.0) -> None:
        """Queue `save`; nobody waits. A failure is logged (once per kind a minute) and handed to
        `on_failed` (on the writer thread), never raised. `within`: it may wait that long for other
        saves to be written with (SaveBatches)."""
        doing = f"saving {execution.id}"

        def failed(exc: Exception) -> None:
            self._write_failed(exc, doing)
            # A broken constraint is no outage: writing it again would break it again.
            if on_failed is not None and not _broke_constraint(exc):
                on_failed(execution, self._db.driver_unavailable(exc, doing))

        def done(failure: Exception | None) -> None:
            if isinstance(failure, StoreUnavailable):  # the writer refused it (damaged, closed)
                self._refused_log.event(f": {doing}: {failure.message}")
                if on_failed is not None:
                    on_failed(execution, failure)
            elif failure is not None:
                failed(failure)

        self._batches.add(execution, None, done, within)

    async def save_transcript(self, execution_id: str, transcript: Transcript) -> None:
        await self._write(lambda db: db.execute(SAVE_TRANSCRIPT, transcript_row(execution_id, transcript)),
                          f"saving the transcript of {execution_id}")

    async def interrupt_running(self, now: float) -> int:
        """Executions this host's daemon left pending/running when it died become `interrupted`;
        returns how many. Another host's (a shared database) are its daemon's, maybe running."""

        def job(db: sqlite3.Connection) -> int:
            with transaction(db):
                rows = db.execute(f"SELECT {READ_COLUMNS} FROM executions WHERE {ACTIVE_ROWS} "
                                  f"AND {OWN_ROWS}").fetchall()
                if not rows:  # as at every clean start: its error's hash (fingerprint.py's patterns) not needed
                    return 0
                error = ExecutionError(type="interrupted", message=INTERRUPTED_MESSAGE,
                                       stack_hash=stack_hash("interrupted", INTERRUPTED_MESSAGE))
                ended = [finished(from_row(row), "interrupted", now, error=error) for row in rows]
                db.executemany(UPSERT, [to_row(execution) for execution in ended])
            return len(ended)

        return await self._write(job, "marking unfinished executions interrupted")

    async def prune(self, *, older_than: float | None, keep_rows: int | None) -> int:
        """Forget ended executions (and their transcripts) older than `older_than` or beyond the
        newest `keep_rows`, a batch per writer transaction so other writes get in between. Only
        this host's (store/hosts.py): on a shared database each daemon prunes what it wrote, to its
        own retention, and `keep_rows` counts the fleet's rows, each host's share aging out with it."""
        removed = 0
        if older_than is not None:
            removed += await self._prune_where("at < ?", (older_than,), "pruning old executions")
        if keep_rows is not None:
            def last_to_forget(db: sqlite3.Connection) -> tuple[float | None, int] | None:
                # Counting from the old end: the excess is usually far smaller than what is kept.
                excess = db.execute("SELECT count(*) FROM executions").fetchone()[0] - keep_rows
                if excess <= 0:
                    return None
                at, seq = db.execute("SELECT at, seq FROM executions ORDER BY at NULLS FIRST, seq LIMIT 1 OFFSET ?",
                                     (excess - 1,)).fetchone()
                return at, seq

            cutoff = await self._read(last_to_forget, "counting executions")
            if cutoff is not None:
                at, seq = cutoff
                condition, params = (("at IS NULL AND seq <= ?", (seq,)) if at is None else
                                     ("(at IS NULL OR at < ? OR (at = ? AND seq <= ?))", (at, at, seq)))
                removed += await self._prune_where(condition, params, "pruning executions beyond the newest kept")
        return removed

    async def _prune_where(self, condition: str, params: tuple[Any, ...], doing: str) -> int:
        removed, batch = 0, self._prune_batch_rows
        while True:
            gone = await self._write(lambda db: self._delete_oldest(db, condition, params, batch), doing)
            removed += gone
            if gone < batch:
                return removed

    @staticmethod
    def _delete_oldest(db: sqlite3.Connection, condition: str, params: tuple[Any, ...], limit: int) -> int:
        """Delete the oldest `limit` ended executions meeting `condition`, with their transcripts."""
        with transaction(db):
            rows = db.execute(f"SELECT seq, id FROM executions WHERE {ENDED_ROWS} AND {condition} AND {OWN_ROWS} "
                              f"ORDER BY at NULLS FIRST, seq LIMIT ?", (*params, limit)).fetchall()
            db.executemany("DELETE FROM executions WHERE seq = ?", [(seq,) for seq, _ in rows])
            db.executemany("DELETE FROM execution_transcripts WHERE execution_id = ?",
                           [(execution_id,) for _, execution_id in rows])
        return len(rows)

    # ------------------------------------------------------------------ reads

    async def get(self, execution_id: str) -> Execution | None:
        return await self._read(lambda db: _one(db, "WHERE id = ?", [execution_id]), f"reading {execution_id}")

    async def by_idempotency_key(self, principal: str, pane_key: str, key: str) -> Execution | None:
        """The execution `principal` submitted to `pane_key` with idempotency key `key`."""
        return await self._read(lambda db: _one(db, "WHERE principal = ? AND pane_key = ? AND idempotency_key = ?",
                                                [principal, pane_key, key]),
                                "looking up an idempotency key")

    async def transcript(self, execution_id: str) -> Transcript | None:
        def job(db: sqlite3.Connection) -> Transcript | None:
            row = db.execute("SELECT data, raw_bytes, truncated, extra FROM execution_transcripts "
                             "WHERE execution_id = ?", (execution_id,)).fetchone()
            if row is None:
                return None
            return Transcript(data=row[0], raw_bytes=row[1], truncated=bool(row[2]),
                              extra=_extra_decoder.decode(row[3]) if row[3] else {})

        return await self._read(job, f"reading the transcript of {execution_id}")

    async def ids_starting(self, ref: str, limit: int) -> list[str]:
        return await self._read(lambda db: short_ids.ids_starting(db, EXECUTION_IDS, ref, limit=limit),
                                f"finding execution {ref}")

    async def short_ids(self, ids: list[str], others: list[str]) -> dict[str, str]:
        return await self._read(lambda db: short_ids.short_ids(db, EXECUTION_IDS, ids, others), "shortening ids")

    async def by_trace(self, trace_id: str, scope: Scope) -> list[Execution]:
        """Every attempt of a trace, by attempt then start."""
        if queries.sees_nothing(scope):
            return []
        visible, params = self._sql(queries.visible(scope))
        return await self._read(
            lambda db: _many(db, f"WHERE trace_id = ?{' AND ' + visible if visible else ''} "
                                 f"ORDER BY coalesce(attempt, 0), at NULLS FIRST, seq", [trace_id, *params]),
            f"reading trace {trace_id}")

    async def error_patterns(self, query: ExecutionQuery) -> list[ErrorPattern]:
        """Failed executions matching `query` grouped by stack_hash, the most recent pattern first."""
        if queries.sees_nothing(query.scope):
            return []
        sql, params = self._sql(tallies.error_patterns(query) if tallies.covers(query, by_agent=False, failures=True)
                                else queries.error_patterns(query, postgres=self._postgres))

        def job(db: sqlite3.Connection) -> list[ErrorPattern]:
            # int(n): PostgreSQL's sum of the tallies is numeric.
            return [ErrorPattern(stack_hash=hashed, count=int(n), first_seen=first or 0.0, last_seen=last or 0.0,
                                 error_type=error_type, message=message or "", example_id=example_id,
                                 example_task_id=task_id, example_trace_id=trace_id)
                    for hashed, n, first, last, example_id, task_id, trace_id, message, error_type
                    in db.execute(sql, params)]

        return await self._read(job, "grouping failures")

    async def unique_failures(self, query: ExecutionQuery) -> list[Execution]:
        """The newest failure of each stack_hash, newest first (tasks_last_failed unique_errors)."""
        if queries.sees_nothing(query.scope):
            return []
        sql, params = self._sql(queries.unique_failures(query, postgres=self._postgres))
        return await self._read(lambda db: [from_row(row) for row in db.execute(sql, params)],
                                "listing unique failures")

    async def stats(self, query: ExecutionQuery) -> list[AgentStats]:
        """Per agent, over the executions matching `query` (its limit/offset ignored)."""
        if queries.sees_nothing(query.scope):
            return []
        sql, params = self._sql(tallies.stats(query) if tallies.covers(query, by_host=self._postgres)
                                else queries.stats(query))
        return await self._read(lambda db: queries.fold_stats(db.execute(sql, params).fetchall()),
                                "counting executions per agent")

    async def timeline(self, query: ExecutionQuery, bucket_s: int) -> list[TimeBucket]:
        """Per agent, kind and stretch of `bucket_s` seconds from `query.since`, oldest first."""
        if queries.sees_nothing(query.scope) or query.since is None:
            return []
        sql, params = self._sql(execution_timeline.timeline(query, bucket_s, by_host=self._postgres))
        since = query.since
        return await self._read(lambda db: execution_timeline.fold(db.execute(sql, params).fetchall(), since, bucket_s),
                                "counting executions over time")

    async def list(self, query: ExecutionQuery) -> tuple[list[Execution], int]:
        """The rows of one page and the total that match (ignoring limit/offset)."""
        if queries.sees_nothing(query.scope):
            return [], 0
        page_sql, page_params = self._sql(queries.page(query, postgres=self._postgres))
        count_sql, count_params = self._sql(tallies.count(query, by_host=self._postgres)
                                            or queries.count(query, postgres=self._postgres))

        def job(db: sqlite3.Connection) -> tuple[list[Execution], int]:
            with transaction(db):  # the page and the total from one snapshot
                if is_postgres(db):  # (each statement has its own at PostgreSQL's default level)
                    db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                page = [from_row(row) for row in db.execute(page_sql, page_params)]
                total = int(db.execute(count_sql, count_params).fetchone()[0])  # PostgreSQL's sum: numeric
            return page, total

        return await self._read(job, "listing executions")

    async def page(self, query: ExecutionQuery) -> list[Execution]:
        """The rows of one page, without the total."""
        if queries.sees_nothing(query.scope):
            return []
        sql, params = self._sql(queries.page(query, postgres=self._postgres))
        return await self._read(lambda db: [from_row(row) for row in db.execute(sql, params)], "listing executions")

    def close(self) -> None:
        """Write what waits (SaveBatches: the writer's queue is the database's to finish), stop the
        readers (the database is the caller's to close) and log held-back failure counts."""
        self._batches.flush()
        if self._readers is not None:
            self._readers.close(STORE_CLOSE_TIMEOUT_S)
        with self._failure_logs_lock:
            for sampled in self._failure_logs.values():
                sampled.flush()


def _many(db: sqlite3.Connection, rest: str, params: list[Any]) -> list[Execution]:
    return [from_row(row) for row in db.execute(f"SELECT {READ_COLUMNS} FROM executions {rest}", params)]


def _one(db: sqlite3.Connection, where: str, params: list[Any]) -> Execution | None:
    found = _many(db, f"{where} LIMIT 1", params)
    return found[0] if found else None
