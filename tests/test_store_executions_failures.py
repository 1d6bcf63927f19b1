"""The history when its database misbehaves: a daemon killed with SIGKILL, a full disk (a real
SQLITE_FULL, through max_page_count), a database locked by another process, a long write.
Every failure reaches the caller as one line of StoreUnavailable; reads go on meanwhile."""

from __future__ import annotations

import asyncio
import logging
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_store_executions import BASE, ONE_PANE, opened, run

from muxd.errors import StoreUnavailable
from muxd.executions.record import Execution
from muxd.store.database import Database, transaction
from muxd.store.location import is_database_url
from muxd.store.opening import open_database
from muxd.store.execution_rows import UPSERT, to_row
from muxd.store.execution_store import ExecutionQuery
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.patience import event_set, patient_wait_for, stretched, wait_process

CHILD_READY_TIMEOUT_S = 30.0
CONDITION_TIMEOUT_S = 10.0
SHORT_BUSY_TIMEOUT_S = 0.2

# The daemon's part: save ended executions and one still running, each save awaited (committed),
# say so, then wait to be killed.
CHILD = """
import asyncio, sys
from muxd.executions.record import Execution
from muxd.store.opening import open_database
from muxd.store.sqlite_executions import SqliteExecutionStore

async def main() -> None:
    store = SqliteExecutionStore(open_database(sys.argv[1]))
    for n in range(50):
        await store.save(Execution(id=f"exec_{n:03d}", pane_id="%1", pane_key="r/%1", agent_name="a",
                                   status="success", started_at=1e9 + n, completed_at=1e9 + n + 0.5))
    await store.save(Execution(id="exec_running", pane_id="%1", pane_key="r/%1", agent_name="a",
                               status="running", started_at=1e9 + 60))
    print("ready", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _execution(name: str, **fields: object) -> Execution:
    return Execution(id=f"exec_{name}", started_at=BASE, **ONE_PANE, **fields)  # type: ignore[arg-type]


def test_every_committed_row_survives_kill_9(db_location: str) -> None:
    path = db_location
    child = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        readable, _, _ = select.select([child.stdout], [], [], stretched(CHILD_READY_TIMEOUT_S))
        assert readable, "the child never said ready"
        assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr else ""
        child.send_signal(signal.SIGKILL)
        wait_process(child, CONDITION_TIMEOUT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    if not is_database_url(path):
        assert Path(f"{path}-wal").stat().st_size > 0  # the rows were in the log, not yet checkpointed

    async def test() -> None:
        async with opened(path) as store:
            page, total = await store.list(ExecutionQuery(limit=100))
            assert total == 51 and {e.id for e in page} == {f"exec_{n:03d}" for n in range(50)} | {"exec_running"}
            assert await store.interrupt_running(2e9) == 1
            running = await store.get("exec_running")
            assert running is not None and running.status == "interrupted" and running.completed_at == 2e9
            assert running.error is not None and running.error.type == "interrupted"

    run(test)


def test_a_full_disk_fails_writes_in_one_line_logs_once_and_reads_go_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    kept = _execution("kept", status="success")

    async def test() -> None:
        db = Database(str(tmp_path / "h.db"))
        store = SqliteExecutionStore(db)
        try:
            await store.save(kept)
            pages = await db.run(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
            await db.run(lambda c: c.execute(f"PRAGMA max_page_count = {pages}"))  # no page more: SQLITE_FULL
            big = _execution("big", response="x" * 200_000)
            with pytest.raises(StoreUnavailable) as caught:
                await store.save(big)
            message = str(caught.value)
            assert message.startswith("the database is full (disk full): saving exec_big: ")
            assert "\n" not in message and caught.value.detail["reason"] == "full"
            with caplog.at_level(logging.ERROR, logger="muxd.store.sqlite_executions"):
                for n in range(5):
                    store.save_soon(_execution(f"soon{n}", response="y" * 200_000))
                await db.run(lambda c: None)  # the writer took its queue in order: those saves are done
            logged = [r.getMessage() for r in caplog.records if "history write failed" in r.getMessage()]
            assert len(logged) == 1 and "disk full" in logged[0] and "saving exec_soon0" in logged[0], logged
            assert await store.get(kept.id) == kept
            assert await store.list(ExecutionQuery()) == ([kept], 1)
            await db.run(lambda c: c.execute("PRAGMA max_page_count = 1073741823"))  # room again
            await store.save(big)
            assert await store.get(big.id) == big
        finally:
            store.close()
            db.close()

    run(test)


def test_a_locked_database_fails_writes_after_the_busy_timeout_while_reads_go_on(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    first, second = _execution("first"), _execution("second")

    async def test() -> None:
        db = Database(str(path), busy_timeout_s=SHORT_BUSY_TIMEOUT_S)
        store = SqliteExecutionStore(db)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            await store.save(first)
            other.execute("BEGIN EXCLUSIVE")  # another process writing, and not done
            other.execute("DELETE FROM executions")
            began = time.monotonic()
            with pytest.raises(StoreUnavailable) as caught:
                await store.save(second)
            waited = time.monotonic() - began
            assert str(caught.value) == "the database is locked: saving exec_second: database is locked"
            assert SHORT_BUSY_TIMEOUT_S * 0.8 <= waited < CONDITION_TIMEOUT_S
            assert await patient_wait_for(store.get(first.id), CONDITION_TIMEOUT_S) == first  # its snapshot
            other.execute("ROLLBACK")
            await store.save(second)
            assert (await store.list(ExecutionQuery()))[1] == 2
        finally:
            other.close()
            store.close()
            db.close()

    run(test)


def test_reads_do_not_wait_behind_a_long_write(db_location: str) -> None:
    """On PostgreSQL too, whose writer may wait on another daemon's locks: reads have their own
    connections there as well."""
    first, second = _execution("first"), _execution("second")
    writing, release = threading.Event(), threading.Event()

    def long_write(db: sqlite3.Connection) -> None:
        with transaction(db, immediate=True):
            db.execute(UPSERT, to_row(second))
            writing.set()
            event_set(release, CONDITION_TIMEOUT_S)

    async def test() -> None:
        db = open_database(db_location)
        store = SqliteExecutionStore(db)
        try:
            await store.save(first)
            write = asyncio.ensure_future(db.run(long_write))
            assert await asyncio.to_thread(writing.wait, CONDITION_TIMEOUT_S)
            # The writer thread is busy inside a transaction: reads answer anyway, from the last commit.
            assert await patient_wait_for(store.get(second.id), CONDITION_TIMEOUT_S) is None
            assert await patient_wait_for(store.list(ExecutionQuery()), CONDITION_TIMEOUT_S) == ([first], 1)
            assert not write.done()
            release.set()
            await write
            assert await store.get(second.id) == second  # a read after a write sees it
        finally:
            release.set()
            store.close()
            db.close()

    run(test)


def test_a_failed_read_is_one_line_too(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as store:
            other = sqlite3.connect(tmp_path / "h.db")
            other.execute("DROP TABLE executions")
            other.close()
            with pytest.raises(StoreUnavailable, match=r"^the database failed: reading exec_x: "
                                                       r"no such table: executions$"):
                await store.get("exec_x")

    run(test)
