"""Saves that wait for the writer thread together are written in one transaction (SaveBatches), on
a real SQLite file: each is stored and acknowledged, a conflicting row fails alone, and saves the
writer refuses (a damaged file) are told so instead of waiting for ever."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import pytest
from test_store_executions import HERE

from muxd.errors import Conflict, StoreUnavailable
from muxd.executions.record import Execution
from muxd.executions.transcript import Transcript
from muxd.store import save_batches
from muxd.store.database import Database
from muxd.store.execution_rows import COLUMNS, ROWS_PER_STATEMENT, to_row
from muxd.store.hosts import HOST_SQL
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.wait import async_wait_until

ONE_PANE = {"pane_id": "%1", "pane_key": "r/%1", "agent_name": "a", "host": HERE}  # a record as read back
WRITER_TIMEOUT_S = 30.0
OLD_SQLITE_PARAMETERS = 999  # what SQLite binds a statement before its version 3.32


def _held(db: Database) -> threading.Event:
    """The writer thread busy until the returned event is set: what is queued meanwhile waits together."""
    release = threading.Event()
    db.run_soon(lambda _c: release.wait(WRITER_TIMEOUT_S))
    return release


@asynccontextmanager
async def opened(path: Path) -> AsyncIterator[tuple[Database, SqliteExecutionStore]]:
    db = Database(str(path))
    store = SqliteExecutionStore(db)
    try:
        yield db, store
    finally:
        db.problem = None  # (a test may have marked it damaged: closing still closes)
        store.close()
        db.close()


def _statements(db: Database) -> list[str]:
    """The writer's statements from now on, as SQLite runs them (BEGIN, INSERT …, COMMIT)."""
    seen: list[str] = []
    db.call_sync(lambda c: c.set_trace_callback(lambda sql: seen.append(sql.split(" ", 1)[0])))
    return seen


def _traced(db: Database) -> list[str]:
    """The writer's statements from now on, whole, their values bound."""
    seen: list[str] = []
    db.call_sync(lambda c: c.set_trace_callback(seen.append))
    return seen


def _upsert_sizes(traced: list[str]) -> list[int]:
    """The rows of each upsert of executions in `traced`, sorted. (The trace repeats a statement
    at each trigger it runs: its rows are counted in its text, each text once.)"""
    return sorted(sql.count(HOST_SQL) for sql in {sql for sql in traced if sql.startswith("INSERT INTO executions (")})


def test_saves_waiting_together_are_one_transaction_each_stored(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            statements = _statements(db)
            release = _held(db)
            started = [Execution(id=f"exec_{n}", status="running", started_at=1.0 + n, **ONE_PANE) for n in range(5)]
            for execution in started:
                store.save_soon(execution)
            ended = msgspec.structs.replace(started[0], status="success", completed_at=9.0)
            transcript = Transcript(data=b"x\x9c\x03\x00\x00\x00\x00\x01", raw_bytes=0, extra={"columns": 80})
            saving = asyncio.ensure_future(store.save(ended, transcript))
            await asyncio.sleep(0)  # (the save queued behind the held writer)
            assert not saving.done()
            release.set()
            await asyncio.wait_for(saving, WRITER_TIMEOUT_S)
            # Six saves (and the transcript), one transaction: not a transaction (or an
            # autocommitted statement) each.
            assert statements[0] == "BEGIN" and statements[-1] == "COMMIT", statements
            assert statements.count("BEGIN") == statements.count("COMMIT") == 1, statements
            assert await store.get("exec_0") == ended  # the later save of the same id wins: order kept
            for execution in started[1:]:
                assert await store.get(execution.id) == execution
            assert (await store.transcript("exec_0")).raw_bytes == 0  # type: ignore[union-attr]

    asyncio.run(test())


def test_a_conflicting_save_in_a_batch_fails_alone(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            first = Execution(id="exec_1", idempotency_key="k", principal="token:ci", **ONE_PANE)
            await store.save(first)
            release = _held(db)
            twin = asyncio.ensure_future(store.save(msgspec.structs.replace(first, id="exec_2")))
            other = asyncio.ensure_future(store.save(Execution(id="exec_3", **ONE_PANE)))
            await asyncio.sleep(0)
            release.set()
            with pytest.raises(Conflict, match="another execution has this idempotency key"):
                await asyncio.wait_for(twin, WRITER_TIMEOUT_S)
            await asyncio.wait_for(other, WRITER_TIMEOUT_S)
            assert await store.get("exec_3") is not None
            assert await store.get("exec_2") is None

    asyncio.run(test())


def test_saves_the_writer_refuses_are_told_so(tmp_path: Path) -> None:
    async def test() -> None:
        refused: list[tuple[str, StoreUnavailable]] = []
        async with opened(tmp_path / "h.db") as (db, store):
            release = _held(db)
            db.problem = "the database h.db is damaged (test)"  # what check_damage sets once it finds damage
            store.save_soon(Execution(id="exec_1", **ONE_PANE), lambda e, failure: refused.append((e.id, failure)))
            saving = asyncio.ensure_future(store.save(Execution(id="exec_2", **ONE_PANE)))
            await asyncio.sleep(0)
            release.set()
            with pytest.raises(StoreUnavailable, match="damaged"):
                await asyncio.wait_for(saving, WRITER_TIMEOUT_S)
            assert [(i, "damaged" in f.message) for i, f in refused] == [("exec_1", True)]

    asyncio.run(test())


def test_a_save_after_the_writer_closed_is_refused_not_lost_in_a_wait(tmp_path: Path) -> None:
    async def test() -> None:
        db = Database(str(tmp_path / "h.db"))
        store = SqliteExecutionStore(db)
        store.close()
        db.close()
        with pytest.raises(StoreUnavailable, match="closed"):
            await asyncio.wait_for(store.save(Execution(id="exec_1", **ONE_PANE)), WRITER_TIMEOUT_S)

    asyncio.run(test())


def test_a_sqlite_failure_of_the_batch_is_each_saves_own(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            # Rows the table refuses whatever they hold: every save of the batch fails, each told.
            db.call_sync(lambda c: c.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON executions BEGIN SELECT RAISE(ABORT, 'refused'); END"))
            release = _held(db)
            saves = [asyncio.ensure_future(store.save(Execution(id=f"exec_{n}", **ONE_PANE))) for n in range(3)]
            await asyncio.sleep(0)
            release.set()
            outcomes = await asyncio.wait_for(asyncio.gather(*saves, return_exceptions=True), WRITER_TIMEOUT_S)
            assert [type(o) for o in outcomes] == [StoreUnavailable] * 3

    asyncio.run(test())


def test_a_save_that_may_wait_goes_with_the_next_that_may_not(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            statements = _statements(db)
            running = [Execution(id=f"exec_{n}", status="running", started_at=1.0, **ONE_PANE) for n in range(3)]
            for execution in running:
                store.save_soon(execution, within=600.0)  # far longer than the test
            await store.save(Execution(id="exec_ended", status="success", completed_at=2.0, **ONE_PANE))
            assert statements.count("BEGIN") == statements.count("COMMIT") == 1, statements
            for execution in running:
                assert await store.get(execution.id) == execution

    asyncio.run(test())


def test_a_save_that_may_wait_is_written_within_its_time_alone(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            execution = Execution(id="exec_1", status="running", started_at=1.0, **ONE_PANE)
            store.save_soon(execution, within=0.2)
            assert await store.get(execution.id) is None  # not before its time

            async def stored() -> bool:
                return await store.get(execution.id) == execution
            await async_wait_until(stored, timeout=WRITER_TIMEOUT_S, message="the put-off row written")

    asyncio.run(test())


def test_an_end_saved_while_the_running_row_waits_is_one_row_written(tmp_path: Path, monkeypatch) -> None:
    written: list[Execution] = []
    monkeypatch.setattr(save_batches, "to_row", lambda e: written.append(e) or to_row(e))

    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            statements = _statements(db)
            running = Execution(id="exec_1", status="running", started_at=1.0, **ONE_PANE)
            store.save_soon(running, within=600.0)
            ended = msgspec.structs.replace(running, status="success", completed_at=2.0)
            transcript = Transcript(data=b"x\x9c\x03\x00\x00\x00\x00\x01", raw_bytes=0, extra={"columns": 80})
            await asyncio.wait_for(store.save(ended, transcript), WRITER_TIMEOUT_S)
            # The row once (as it ended) and its transcript: the running row's write never came.
            assert written == [ended] and statements.count("BEGIN") == 1, (written, statements)
            assert await store.get(running.id) == ended
            assert await store.transcript(running.id) == transcript

    asyncio.run(test())


def test_a_save_due_sooner_brings_the_waiting_batch_forward(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            statements = _statements(db)
            first = Execution(id="exec_1", status="running", started_at=1.0, **ONE_PANE)
            store.save_soon(first, within=600.0)
            second = Execution(id="exec_2", status="success", completed_at=2.0, **ONE_PANE)
            await asyncio.wait_for(store.save(second, within=0.2), WRITER_TIMEOUT_S)  # not 600 s
            assert statements.count("BEGIN") == 1, statements
            assert await store.get(first.id) == first

    asyncio.run(test())


def test_rows_written_together_later_come_after_the_saves_put_off(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            running = Execution(id="exec_1", status="running", started_at=1.0, **ONE_PANE)
            store.save_soon(running, within=600.0)
            ended = msgspec.structs.replace(running, status="interrupted", completed_at=2.0)
            await store.save_many([(ended, None)])  # what a stopping daemon writes of its running turns
            assert await store.get(running.id) == ended

    asyncio.run(test())


def test_a_batchs_rows_go_several_a_statement_and_an_id_twice_in_two(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            statements = _traced(db)
            many = ROWS_PER_STATEMENT + 10
            started = [Execution(id=f"exec_{n}", status="running", started_at=1.0 + n, **ONE_PANE) for n in range(many)]
            ended = msgspec.structs.replace(started[-1], status="success", completed_at=99.0)
            await store.save_many([(execution, None) for execution in started] + [(ended, None)])
            # A full statement, the rest in a second, and the id met again in a third after it.
            assert _upsert_sizes(statements) == [1, many - ROWS_PER_STATEMENT, ROWS_PER_STATEMENT]
            assert statements.count("BEGIN") == 1
            assert await store.get(ended.id) == ended
            assert [await store.get(execution.id) for execution in started[:-1]] == started[:-1]
            counts = db.call_sync(lambda c: dict(c.execute("SELECT status, n FROM execution_status_counts")))
            assert counts == {"running": many - 1, "success": 1}  # each row counted once, as it stands

    asyncio.run(test())


def test_a_sqlite_binding_fewer_parameters_gets_statements_of_fewer_rows(tmp_path: Path) -> None:
    async def test() -> None:
        async with opened(tmp_path / "h.db") as (db, store):
            db.call_sync(lambda c: c.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, OLD_SQLITE_PARAMETERS))
            statements = _traced(db)
            rows = [Execution(id=f"exec_{n}", status="running", started_at=1.0 + n, **ONE_PANE) for n in range(60)]
            await store.save_many([(execution, None) for execution in rows])
            most = OLD_SQLITE_PARAMETERS // len(COLUMNS)
            assert _upsert_sizes(statements) == sorted([most] * (60 // most) + [60 % most])
            assert [await store.get(execution.id) for execution in rows] == rows

    asyncio.run(test())


def test_the_savers_of_one_batch_are_told_in_one_wake_up_of_the_loop(tmp_path: Path) -> None:
    async def test() -> None:
        loop = asyncio.get_running_loop()
        wake_ups: list[object] = []
        call_soon_threadsafe = loop.call_soon_threadsafe

        def counted(callback, *args):  # type: ignore[no-untyped-def]
            wake_ups.append(callback)
            return call_soon_threadsafe(callback, *args)

        async with opened(tmp_path / "h.db") as (db, store):
            release = _held(db)
            loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
            saves = [asyncio.ensure_future(store.save(Execution(id=f"exec_{n}", **ONE_PANE))) for n in range(5)]
            await asyncio.sleep(0)  # (all five queued behind the held writer)
            release.set()
            await asyncio.wait_for(asyncio.gather(*saves), WRITER_TIMEOUT_S)
            loop.call_soon_threadsafe = call_soon_threadsafe  # type: ignore[method-assign]
            assert len(wake_ups) == 1, wake_ups
            for n in range(5):
                assert await store.get(f"exec_{n}") is not None

    asyncio.run(test())


def test_a_save_put_off_is_written_when_the_store_closes(tmp_path: Path) -> None:
    async def test() -> None:
        db = Database(str(tmp_path / "h.db"))
        store = SqliteExecutionStore(db)
        execution = Execution(id="exec_1", status="success", completed_at=2.0, **ONE_PANE)
        saving = asyncio.ensure_future(store.save(execution, within=600.0))
        await asyncio.sleep(0)  # (queued, put off)
        store.close()
        await asyncio.wait_for(saving, WRITER_TIMEOUT_S)  # acknowledged once written, not before
        db.close()
        async with opened(tmp_path / "h.db") as (_, reopened):
            assert await reopened.get(execution.id) == execution

    asyncio.run(test())
