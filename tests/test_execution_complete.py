"""An ended execution is always saved ended: when completing it from the screen and the agent's
log fails (a bug, a log no parser foresaw), it is saved as it ended rather than left `running`
in the store for ever (a ghost row the stats count). On a real SQLite history."""

from __future__ import annotations

import asyncio
import time

from muxd.daemon.work import execution_finish
from muxd.daemon.work.execution_finish import TurnSnapshot
from muxd.daemon.work.executions import ExecutionService
from muxd.executions.record import Execution, finished, new_execution_id
from muxd.store.database import Database
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.wait import async_wait_until


def test_a_failed_completion_still_saves_the_execution_ended(tmp_path, monkeypatch):
    async def broken(execution: Execution, shot: TurnSnapshot, logs: object) -> Execution:
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    monkeypatch.setattr(execution_finish, "finalize", broken)

    async def main() -> Execution | None:
        db = Database(str(tmp_path / "history.db"))
        store = SqliteExecutionStore(db)
        service = ExecutionService(detections={}, store=store, transcript_max_bytes=1024)
        try:
            running = Execution(id=new_execution_id(), pane_id="%1", pane_key="r/%1", agent_name="worker",
                                agent_type="claude", status="running", started_at=time.time(), message="hello")
            await store.save(running)
            ended = finished(running, "success", time.time())
            service.finishing[ended.id] = ended
            await service._complete(ended, TurnSnapshot(agent_type="claude"), None)
            assert await service.wait([ended.id], any_one=False, timeout_s=10.0)  # told once stored
            assert ended.id not in service.finishing
            return await store.get(ended.id)
        finally:
            service.logs.close()
            store.close()
            db.close()

    saved = asyncio.run(main())
    assert saved is not None and saved.status == "success" and saved.completed_at is not None


def test_a_save_the_store_could_not_even_queue_keeps_the_execution_for_a_later_write(tmp_path):
    """A store that raises at once (a bug: it tells failures through its future) neither leaves
    the execution `finishing` for ever nor acknowledges it: the backlog keeps it, listeners are told."""
    async def main() -> tuple[list[Execution], Execution | None, Execution | None]:
        db = Database(str(tmp_path / "history.db"))
        store = SqliteExecutionStore(db)
        told: list[Execution] = []
        service = ExecutionService(detections={}, store=store, transcript_max_bytes=1024, on_ended=told.append)

        def refused(*args: object, **kwargs: object) -> None:
            raise RuntimeError("no batch")

        store.saving = refused  # type: ignore[method-assign]
        try:
            ended = finished(Execution(id=new_execution_id(), pane_id="%1", pane_key="r/%1", agent_name="worker",
                                       status="running", started_at=time.time(), message="hello"),
                             "success", time.time())
            service._store(ended, None)

            async def told_yet() -> list[Execution]:
                return told

            await async_wait_until(told_yet, timeout=10.0, message="the end told")
            assert ended.id not in service.finishing
            return told, service.live(ended.id), await store.get(ended.id)
        finally:
            service.logs.close()
            store.close()
            db.close()

    told, kept, stored = asyncio.run(main())
    assert [e.id for e in told] == [kept.id] and kept.status == "success" and stored is None
