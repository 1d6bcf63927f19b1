"""A simulated muxd host for bench_fleet_load.py: what one daemon of `agents` panes writes to its
database as they take turns, through the store's own code on its own writer thread and
connection (a `Database` or `PgDatabase`, timed per job):

- each turn's execution row at its start (save_soon, as a delivered prompt is saved) and at its
  end with its transcript (save, as `_complete` does), the tallies' triggers moving with them;
- its audit rows through the daemon's own `AuditQueue` (batched, one flush at a time);
- on PostgreSQL the daemon's own `FleetPresence`: the panes' summaries published on each change,
  at most every FLEET_PUBLISH_MIN_INTERVAL_S, a heartbeat and a look for stale hosts every
  FLEET_BEAT_INTERVAL_S;
- optionally a task claimed at a turn's start and completed at its end (task_store's own calls).

Not simulated (rare next to turns): pending rows of queued prompts, cross-host actions and
their NOTIFY, token changes, pruning, the readers' queries.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from typing import Any

import msgspec

from muxd.daemon.access.audit_queue import AuditQueue
from muxd.daemon.work.fleet_presence import FleetPresence
from muxd.errors import StoreUnavailable
from muxd.executions.fingerprint import stack_hash
from muxd.executions.record import Execution, ExecutionError
from muxd.executions.transcript import Transcript
from muxd.protocol.messages import AuditRow
from muxd.protocol.pane_messages import (AgentSummary, PaneInfo, SummaryActivity, SummaryContext,
                                         SummarySession)
from muxd.store import task_store
from muxd.store.database import Database
from muxd.store.sqlite_executions import SqliteExecutionStore

TASK_PLAN = "fleet"
TASK_LEASE_S = 900
KNOWLEDGE_QUOTA = 1000
FAILURE_KINDS = 5  # distinct failures the fleet's failed turns show (their stack hashes)
AUDIT_TOOLS = ("send_task", "wait_for", "get_execution_result", "agent_summary")
RESPONSE = "Done: the change is in place and the tests pass. " * 8  # ~400 characters of answer


class Recorder:
    """Durations (ms) with the time they ended, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rows: list[tuple[float, float]] = []

    def add(self, ended: float, ms: float) -> None:
        with self._lock:
            self.rows.append((ended, ms))

    def within(self, start: float, end: float) -> list[float]:
        with self._lock:
            return [ms for at, ms in self.rows if start <= at < end]


JOBS = Recorder()    # every writer job (one transaction, most of them): its time on the writer thread
SAVES = Recorder()   # a turn's end saved: from the call to the write told done (queue + transaction)
LAG = Recorder()     # how late a turn began against its schedule: the simulation keeping up


def timed(base: type[Database]) -> type[Database]:
    """`base` with each job's time on the writer thread recorded in JOBS."""
    class Timed(base):  # type: ignore[valid-type, misc]
        def _call(self, job: Any) -> Any:
            started = time.perf_counter()
            try:
                return super()._call(job)
            finally:
                ended = time.perf_counter()
                JOBS.add(ended, (ended - started) * 1000)
    return Timed


def pane_info(pane_id: str, name: str) -> PaneInfo:
    return PaneInfo(id=pane_id, session="fleet", session_id="$1", window=int(pane_id[1:]), window_id=f"@{pane_id[1:]}",
                    window_name=name, index=0, name=name, tags=["worker"], command=["claude"], pid=4242,
                    foreground="claude", cwd="/home/dev/src/project", width=120, height=40, status="running",
                    exit_code=None, created_at=time.time(), title="✳ Claude Code", active=False)


def summary(pane_id: str, state: str, tool: str | None, tokens: int) -> AgentSummary:
    return AgentSummary(pane_id=pane_id, agent_type="claude", is_agent=True,
                        activity=SummaryActivity(state=state, description=tool and f"Running {tool}",
                                                 duration_secs=None, tool=tool, tool_input=tool and "pytest -q tests/"),
                        session=SummarySession(id="5f0c6f2e-1c1b-4d55-9b0a-3d1f3f0e2a11", model="claude-sonnet-4",
                                               tokens_used=tokens),
                        recent_tools=["Read(src/app.py)", "Edit(src/app.py)", "Bash(pytest -q)"],
                        context=SummaryContext(is_awaiting_input=state == "idle", is_awaiting_confirmation=False,
                                               tags=["worker"], cwd="/home/dev/src/project"))


class SimHost:
    """One daemon's writes for `agents` panes; `fleet`: it publishes to the fleet's tables (PostgreSQL)."""

    def __init__(self, name: str, db: Database, agents: int, transcript: Transcript, *, fleet: bool,
                 distinct_names: bool, tool_calls: int, audit_rows: int, task_share: float, fail_share: float,
                 seed: int) -> None:
        self.name = name
        self.db = db
        self.store = SqliteExecutionStore(db, reader_threads=1)  # readers connect on a first read: none here
        self.audit: AuditQueue | None = None
        self.transcript = transcript
        self.tool_calls, self.audit_rows = tool_calls, audit_rows
        self.task_share, self.fail_share = task_share, fail_share
        self.rng = random.Random(seed)
        self.run_id = uuid.uuid4().hex[:8]
        self.pane_ids = [f"%{n}" for n in range(agents)]
        # Unnamed panes go by their id, the same on every host: the tallies' rows are then shared.
        self.names = [f"{name}-w{n}" if distinct_names else pane for n, pane in enumerate(self.pane_ids)]
        self.infos = {pane: pane_info(pane, agent) for pane, agent in zip(self.pane_ids, self.names)}
        self.summaries = {pane: summary(pane, "idle", None, 0) for pane in self.pane_ids}
        self.presence = FleetPresence(db, self.snapshot, stale_after_s=15.0) if fleet else None
        self.turns_begun = 0
        self.failures = 0

    def snapshot(self) -> dict[str, tuple[PaneInfo, AgentSummary]]:
        return {pane: (self.infos[pane], self.summaries[pane]) for pane in self.pane_ids}

    async def open(self) -> None:
        self.audit = AuditQueue(self.db)
        if self.presence is not None:
            await self.presence.open()

    def close(self) -> None:
        if self.presence is not None:
            self.presence.close()
        if self.audit is not None:
            self.audit.close()
        self.store.close()

    # ------------------------------------------------------------------ one turn

    def _state(self, n: int, state: str, tool: str | None) -> None:
        pane = self.pane_ids[n]
        tokens = (self.summaries[pane].session.tokens_used or 0) + 1500
        self.summaries[pane] = summary(pane, state, tool, tokens)
        if self.presence is not None:
            self.presence.changed()

    async def _audit(self, count: int) -> None:
        assert self.audit is not None
        for _ in range(count):
            tool = self.rng.choice(AUDIT_TOOLS)
            await self.audit.put(AuditRow(ts=time.time(), principal="token:orchestrator", kind="mcp", tool=tool,
                                          args_sha256=uuid.uuid4().hex * 2, status="ok", error_code=None, rows=1,
                                          latency_ms=3.5))

    def begin_row(self, n: int, started: float) -> Execution:
        pane = self.pane_ids[n]
        return Execution(id=f"exec_{int(started * 1000)}_{uuid.uuid4().hex[:8]}", pane_id=pane,
                         pane_key=f"{self.run_id}/{pane}", agent_name=self.names[n], agent_type="claude",
                         status="running", triggered_by="mcp", principal="token:orchestrator",
                         message="Fix the failing test in tests/test_app.py and run the suite.",
                         queued_at=started, started_at=started, timeout_s=1800.0)

    async def begin(self, n: int) -> tuple[Execution, Any]:
        """A turn's start: its row, the pane busy, the orchestrator's calls, a task claimed."""
        self.turns_begun += 1
        execution = self.begin_row(n, time.time())
        self.store.save_soon(execution)
        self._state(n, "busy", None)
        task = None
        if self.rng.random() < self.task_share:
            agent = f"agent:{self.pane_ids[n]}@{self.name}"
            task = await self.db.call(lambda c: task_store.claim_next(c, agent, TASK_LEASE_S, time.time(),
                                                                      plan=TASK_PLAN), "claiming")
        await self._audit(self.audit_rows // 2)
        return execution, task

    def tool(self, n: int, k: int) -> None:
        """A tool call mid-turn: the pane's summary changes (published, coalesced)."""
        self._state(n, "busy", f"Bash#{k}")

    async def end(self, n: int, execution: Execution, task: Any) -> None:
        """A turn's end: its row and transcript, the pane idle, the task completed, the calls."""
        ended = time.time()
        started = execution.started_at or ended
        error = None
        if self.rng.random() < self.fail_share:
            kind = self.rng.randrange(FAILURE_KINDS)
            message = f"API Error: 529 overloaded (kind {kind})"
            error = ExecutionError(type="api_error", message=message, stack_hash=stack_hash("api_error", message))
            self.failures += 1
        done = msgspec.structs.replace(
            execution, status="failed" if error else "success", error=error, completed_at=ended,
            duration_ms=round((ended - started) * 1000), tokens_used=self.rng.randrange(2000, 40000),
            cost_usd=round(self.rng.uniform(0.01, 0.5), 4), cost_source="log", response=RESPONSE,
            tool_calls=[f"Bash(pytest -q tests/test_{k}.py)" for k in range(self.tool_calls)],
            files_written=["src/app.py"], transcript_bytes=self.transcript.raw_bytes)
        self._state(n, "idle", None)
        began = time.perf_counter()
        try:
            await self.store.save(done, self.transcript)
        except StoreUnavailable:
            pass  # counted by the caller through the database's errors: the figures say so
        SAVES.add(time.perf_counter(), (time.perf_counter() - began) * 1000)
        if task is not None:
            agent = f"agent:{self.pane_ids[n]}@{self.name}"
            await self.db.call(lambda c: task_store.complete(c, task.id, agent, output={"ok": True}, learnings=[],
                                                             knowledge_quota=KNOWLEDGE_QUOTA, now=time.time()),
                               "completing")
        await self._audit(self.audit_rows - self.audit_rows // 2)

    # ------------------------------------------------------------------ an agent's turns

    async def agent(self, n: int, period_s: float, busy_s: float, until: float) -> None:
        """Turns every `period_s`, each `busy_s` long with its tool calls, until `until` (loop
        time), starting at a random point of the cycle so that the fleet is in its steady state
        at once (a turn under way then began before the run: its row is written first)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        phase = self.rng.uniform(0, period_s)
        start = now - phase
        if phase < busy_s:
            execution = self.begin_row(n, time.time() - phase)
            await self.store.save(execution)
            await self._through(n, execution, None, start, busy_s, until)
        start += period_s
        while start < until:
            await asyncio.sleep(max(0.0, start - loop.time()))
            LAG.add(time.perf_counter(), (loop.time() - start) * 1000)
            execution, task = await self.begin(n)
            await self._through(n, execution, task, start, busy_s, until)
            start += period_s

    async def _through(self, n: int, execution: Execution, task: Any, start: float, busy_s: float,
                       until: float) -> None:
        loop = asyncio.get_running_loop()
        for k in range(self.tool_calls):
            await asyncio.sleep(max(0.0, start + busy_s * (k + 1) / (self.tool_calls + 1) - loop.time()))
            self.tool(n, k)
        await asyncio.sleep(max(0.0, start + busy_s - loop.time()))
        if loop.time() < until:
            await self.end(n, execution, task)


def seed_tasks(c: Any, count: int) -> None:
    """`count` ready tasks in TASK_PLAN (created through task_store, as tasks_create does)."""
    from muxd.tasks.model import Verification

    now = time.time()
    for i in range(count):
        task_store.create_task(c, title=f"fleet task {i}", description="Make the test pass.", plan=TASK_PLAN,
                               priority=i % 7, verification=Verification(), depends_on=[], context={},
                               created_by="user:bench", now=now)
