"""ExecutionBacklog on a real SQLite file that fails for real: a full disk (max_page_count on the
writer's connection) and a lock held by another connection. What the store would not take is
found in memory, written again once it can be, bounded, and written (or named as lost) at a stop."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from test_store_executions import BASE, ONE_PANE, run

from muxd.daemon.work.execution_backlog import ExecutionBacklog
from muxd.errors import StoreUnavailable
from muxd.executions.record import Execution
from muxd.executions.transcript import Transcript
from muxd.store.database import Database
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.wait import async_wait_until

SHORT_BUSY_TIMEOUT_S = 0.2
RETRIED_WITHIN_S = 30.0  # the first retries come after 1 s, 2 s, 4 s…; generous for a loaded machine
ROOM = 1073741823


def _execution(name: str, **fields: object) -> Execution:
    fields.setdefault("status", "success")
    return Execution(id=f"exec_{name}", started_at=BASE, **ONE_PANE, **fields)  # type: ignore[arg-type]


def _failure() -> StoreUnavailable:
    return StoreUnavailable("the database is locked: saving: database is locked")


@asynccontextmanager
async def _backlog(path: Path, newest: Callable[[str], Execution | None] = lambda _: None,
                   **bounds: Any) -> AsyncIterator[tuple[Database, SqliteExecutionStore, ExecutionBacklog]]:
    db = Database(str(path), busy_timeout_s=SHORT_BUSY_TIMEOUT_S)
    store = SqliteExecutionStore(db)
    backlog = ExecutionBacklog(store, newest, **bounds)
    try:
        yield db, store, backlog
    finally:
        await backlog.close([])
        store.close()
        db.close()


def test_what_a_full_disk_refused_is_found_and_written_once_there_is_room(tmp_path: Path) -> None:
    big = _execution("big", response="x" * 200_000)
    transcript = Transcript(data=b"\x78\x9c\x03\x00\x00\x00\x00\x01", raw_bytes=0)

    async def test() -> None:
        async with _backlog(tmp_path / "h.db") as (db, store, backlog):
            pages = await db.run(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
            await db.run(lambda c: c.execute(f"PRAGMA max_page_count = {pages}"))  # no page more: SQLITE_FULL
            with pytest.raises(StoreUnavailable) as caught:
                await store.save(big, transcript)
            backlog.keep(big, transcript, caught.value)
            assert backlog.get(big.id) == big and backlog.transcript(big.id) == transcript and len(backlog) == 1
            assert "disk full" in backlog.reason
            assert await store.get(big.id) is None
            await db.run(lambda c: c.execute(f"PRAGMA max_page_count = {ROOM}"))  # room again
            await async_wait_until(lambda: store.get(big.id), timeout=RETRIED_WITHIN_S, message="the row written")
            assert await store.transcript(big.id) == transcript
            assert not backlog  # written, so forgotten

    run(test)


def test_a_pending_execution_is_written_as_it_is_now_and_an_end_is_never_replaced(tmp_path: Path) -> None:
    queued = _execution("q", status="pending")
    now = {queued.id: _execution("q", status="running")}

    async def test() -> None:
        async with _backlog(tmp_path / "h.db", now.get) as (_, store, backlog):
            backlog.keep(queued, None, _failure())
            await async_wait_until(lambda: store.get(queued.id), timeout=RETRIED_WITHIN_S, message="written")
            assert (await store.get(queued.id)).status == "running"  # type: ignore[union-attr]
            ended = _execution("e", status="cancelled")
            backlog.keep(ended, None, _failure())
            backlog.keep(_execution("e", status="pending"), None, _failure())  # a late report of an older save
            assert backlog.get(ended.id) == ended

    run(test)


def test_past_its_bound_the_oldest_is_dropped_counted_and_remembered_as_lost(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def test() -> None:
        async with _backlog(tmp_path / "h.db", max_count=2, transcript_max_bytes=10) as (_, _, backlog):
            with caplog.at_level(logging.ERROR, logger="muxd.daemon.work.execution_backlog"):
                for n in range(3):
                    backlog.keep(_execution(f"{n}", principal="token:ci"),
                                 Transcript(data=b"12345678", raw_bytes=8), _failure())
            assert [e.id for e in backlog] == ["exec_1", "exec_2"] and backlog.dropped == 1
            lost = backlog.lost("exec_0")
            assert lost is not None and (lost.status, lost.principal, lost.message) == ("success", "token:ci", None)
            assert any("exec_0 (success, agent a) is lost" in r.getMessage() for r in caplog.records)
            # 8 bytes of transcripts fit in 10, 16 do not: the later ones are kept without theirs.
            assert backlog.transcript("exec_1") is None and backlog.get("exec_1").transcript_truncated  # type: ignore[union-attr]
            assert backlog.transcript("exec_2") is None
        async with _backlog(tmp_path / "h.db", max_count=1) as (_, _, backlog):
            backlog.keep(_execution("p", status="running"), None, _failure())
            backlog.keep(_execution("e"), None, _failure())
            # A running one is still in memory (its next save writes it): no loss to count.
            assert [e.id for e in backlog] == ["exec_e"] and backlog.dropped == 0 and backlog.lost("exec_p") is None

    run(test)


def test_a_stop_writes_the_backlog_or_names_each_execution_it_loses(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "h.db"

    async def test() -> None:
        async with _backlog(path) as (_, store, written):
            written.keep(_execution("kept"), None, _failure())
            await written.close([_execution("stopped", status="interrupted")])  # before its first retry
            assert (await store.get("exec_kept")) is not None and (await store.get("exec_stopped")) is not None
        async with _backlog(path) as (_, store, lost):
            lost.keep(_execution("locked", message="make test\nnow"), None, _failure())
            other = sqlite3.connect(path, isolation_level=None)
            other.execute("BEGIN EXCLUSIVE")
            with caplog.at_level(logging.ERROR, logger="muxd.daemon.work.execution_backlog"):
                await lost.close([_execution("running", status="interrupted")])
            other.execute("ROLLBACK")
            other.close()
            said = [r.getMessage() for r in caplog.records]
            assert any(m.startswith("history: 2 execution(s) could not be written before the daemon stopped and "
                                    "are lost: the database is locked") for m in said), said
            assert "history: lost exec_locked (success, agent a, pane %1): make test" in said
            assert any(m.startswith("history: lost exec_running (interrupted") for m in said)
            assert await store.get("exec_locked") is None

    run(test)
