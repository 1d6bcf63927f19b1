"""Audit rows on their way to the store: a bounded queue, written in batches by one flush at a time.

Anyone who may connect can record calls as fast as the socket carries them. Rows wait here, at
most `max_rows`, and the writer takes them `batch_rows` to a transaction, so it keeps up with a
flood. A recorder that finds the queue full waits for room (`put`): its request stays unanswered,
and the connection's bound on requests in flight stops the daemon reading that connection, while
every other client is served. A row that cannot wait (a denied request, checked synchronously)
is dropped and counted when the queue is full (`add`); a batch the store refuses is counted too,
unless a PostgreSQL server could not be reached: the writer keeps that one until it is back.
Both counts are in `server status` and the metrics.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from muxd.config import AUDIT_BATCH_ROWS, AUDIT_LOSS_LOG_INTERVAL_S, AUDIT_QUEUE_MAX_ROWS
from muxd.sampled_log import SampledLog
from muxd.protocol.messages import AuditRow
from muxd.store import audit
from muxd.store.database import Database
from muxd.store.pg_errors import UNREACHABLE
from muxd.prometheus import Exposition

log = logging.getLogger(__name__)


class AuditQueue:
    def __init__(self, db: Database, *, max_rows: int = AUDIT_QUEUE_MAX_ROWS,
                 batch_rows: int = AUDIT_BATCH_ROWS) -> None:
        self._db = db
        self._max_rows = max_rows
        self._batch_rows = batch_rows
        self._rows: deque[AuditRow] = deque()
        self._queued = 0   # rows ever queued
        self._settled = 0  # rows ever written or lost
        self._progress = asyncio.Event()  # set after each batch: room, and rows settled
        self._flushing: asyncio.Task[None] | None = None
        self.dropped = 0   # rows refused because the queue was full
        self.failed = 0    # rows of batches the store refused
        self._dropped_log = SampledLog(log, logging.ERROR, "audit queue full: a denied request's row was dropped",
                                       interval_s=AUDIT_LOSS_LOG_INTERVAL_S)
        self._failed_log = SampledLog(log, logging.ERROR, "audit rows not written",
                                      interval_s=AUDIT_LOSS_LOG_INTERVAL_S)

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, row: AuditRow) -> bool:
        """Queue `row` now; False (the row dropped and counted) when the queue is full."""
        if len(self._rows) >= self._max_rows:
            self.dropped += 1
            self._dropped_log.event(f": {row.principal} {row.tool}")
            return False
        self._append(row)
        return True

    async def put(self, row: AuditRow) -> None:
        """Queue `row`, waiting while the queue is full."""
        while len(self._rows) >= self._max_rows:
            self._progress.clear()
            await self._progress.wait()
        self._append(row)

    async def drain(self) -> None:
        """Return once every row queued before this call is written (or counted lost): a read of
        the audit after it sees them."""
        target = self._queued
        while self._settled < target:
            self._progress.clear()
            await self._progress.wait()

    def close(self) -> None:
        """Hand what is still queued to the writer (its close waits for it, bounded). A batch in
        flight is already the writer's: the flush is not cancelled, which could cancel it unwritten."""
        rows, self._rows = list(self._rows), deque()
        if rows:
            try:
                self._db.submit(lambda c: audit.append(c, rows), "audit")
            except RuntimeError:  # the writer is already shut down
                self.failed += len(rows)
        self._dropped_log.flush()
        self._failed_log.flush()

    def write(self, out: Exposition) -> None:
        """The rows lost so far, as Prometheus counters."""
        out.counter("muxd_audit_rows_dropped_total", "Audit rows dropped: the queue was full.", [((), self.dropped)])
        out.counter("muxd_audit_rows_failed_total", "Audit rows the database refused.", [((), self.failed)])

    def prometheus_text(self) -> str:
        out = Exposition()
        self.write(out)
        return out.text()

    def _append(self, row: AuditRow) -> None:
        self._rows.append(row)
        self._queued += 1
        if self._flushing is None:
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    def _kept(self, exc: Exception, batch: list[AuditRow]) -> bool:
        """Whether `batch`, refused with `exc`, is handed to the writer to keep: a PostgreSQL server
        out of reach takes it when it is back (pg_database.py); a file's refusal loses it."""
        if getattr(exc, "detail", {}).get("reason") != UNREACHABLE:
            return False
        try:
            self._db.submit(lambda c: audit.append(c, batch), "audit")
        except RuntimeError:  # the writer is shut down
            return False
        return True

    async def _flush(self) -> None:
        try:
            while self._rows:
                batch = [self._rows.popleft() for _ in range(min(self._batch_rows, len(self._rows)))]
                try:
                    await self._db.call(lambda c: audit.append(c, batch), f"writing {len(batch)} audit row(s)")
                except Exception as exc:  # the store refused it (locked, full, damaged): count, go on
                    if not self._kept(exc, batch):
                        self.failed += len(batch)
                        self._failed_log.event(f" ({len(batch)}): {getattr(exc, 'message', repr(exc))}")
                self._settled += len(batch)
                self._progress.set()
        finally:
            self._flushing = None
