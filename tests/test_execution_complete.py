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
