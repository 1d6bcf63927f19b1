"""The audit queue (muxd/daemon/access/audit_queue.py): bounded, written in batches; a row that cannot
wait is dropped and counted when it is full, a batch the store refuses is counted, and a reader
that drains it sees every row queued before."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from muxd.daemon.access.audit_queue import AuditQueue
from muxd.protocol.messages import AuditRow
from muxd.store import audit
from muxd.store.database import Database

SHORT_BUSY_TIMEOUT_S = 0.1


def _row(n: int) -> AuditRow:
    return AuditRow(ts=float(n), principal="token:x", kind="mcp", tool=f"t{n}", args_sha256="0" * 64,
                    status="ok", error_code=None, rows=n, latency_ms=1.0)


def _stored(db: Database) -> list[str]:
    return [r.tool for r in reversed(db.call_sync(lambda c: audit.recent(c, limit=1000)))]


def test_a_full_queue_drops_and_counts_what_cannot_wait_and_batches_the_rest(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "a.db"))

    async def scenario() -> None:
        queue = AuditQueue(db, max_rows=3, batch_rows=2)
        assert [queue.add(_row(n)) for n in range(5)] == [True, True, True, False, False]
        assert queue.dropped == 2 and len(queue) == 3
        await queue.drain()
        assert len(queue) == 0 and queue.failed == 0
        # A caller that can wait does: ten rows through a queue of three, in order, none lost.
        await asyncio.gather(*(queue.put(_row(n)) for n in range(10, 20)))
        assert len(queue) <= 3
        await queue.drain()
        assert queue.dropped == 2

    try:
        asyncio.run(scenario())
        assert _stored(db) == [f"t{n}" for n in (0, 1, 2, *range(10, 20))]
    finally:
        db.close()


def test_a_batch_the_store_refuses_is_counted_and_the_queue_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = Database(str(path), busy_timeout_s=SHORT_BUSY_TIMEOUT_S)
    other = sqlite3.connect(path, isolation_level=None)

    async def scenario() -> None:
        queue = AuditQueue(db, batch_rows=2)
        other.execute("BEGIN EXCLUSIVE")
        for n in range(3):
            queue.add(_row(n))
        await queue.drain()
        assert (queue.failed, queue.dropped) == (3, 0)
        other.execute("ROLLBACK")
        queue.add(_row(3))
        await queue.drain()
        assert "muxd_audit_rows_failed_total 3" in queue.prometheus_text()

    try:
        asyncio.run(scenario())
        assert _stored(db) == ["t3"]
    finally:
        other.close()
        db.close()


def test_rows_queued_at_close_are_written(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = Database(str(path))

    async def scenario() -> None:
        queue = AuditQueue(db)
        for n in range(5):
            queue.add(_row(n))
        queue.close()  # as the daemon stops: before the flush ran

    asyncio.run(scenario())
    db.close()
    again = Database(str(path))
    try:
        assert _stored(again) == [f"t{n}" for n in range(5)]
    finally:
        again.close()
