"""`TaskService`: the task queue in the daemon (seed 001).

The queue's rules live in the store (muxd/store/task_store.py), each operation one SQLite
transaction on the writer thread: a claim is a compare-and-set there, so racing clients never
both win. This service adds what needs time: leases that run out (swept every
TASK_LEASE_SWEEP_S, and before each operation), verification checks run as executions in
panes (task_verify.py), dispatchers that work the queue for agent panes (task_dispatch.py),
and a pulse that wakes whoever waits for the queue to change.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from muxd.config import (
    KNOWLEDGE_STORED_QUOTA_DEFAULT, TASK_LEASE_SWEEP_S, TASK_MAX_ATTEMPTS_DEFAULT, TASK_VERIFY_GITHUB_PR_DEFAULT,
    TASK_VERIFY_GITLAB_MR_DEFAULT,
)
from muxd.daemon.work.task_dispatch import Dispatch
from muxd.daemon.work.task_verify import run_check
from muxd.store import task_store
from muxd.errors import BadRequest
from muxd.sampled_log import FailureStreak
from muxd.store.database import Database
from muxd.store.retention import whole_number
from muxd.tasks.model import RUN_KINDS, Task

if TYPE_CHECKING:
    from muxd.daemon.panes.registry import Registry
    from muxd.daemon.work.background_run import SpawnPane
    from muxd.daemon.work.executions import ExecutionService
    from muxd.telemetry.export import SpanExport

log = logging.getLogger(__name__)
T = TypeVar("T")
# (task id, its state) of a task that changed; (None, None): several (leases ran out).
TaskMoved = Callable[[str | None, str | None], None]

ENV_MAX_ATTEMPTS = "MUXD_TASK_MAX_ATTEMPTS"
JOBS_STOP_WAIT_S = 1.0  # cancelled jobs only run their cleanup: no more than a loop step or two
ENV_KNOWLEDGE_QUOTA = "MUXD_KNOWLEDGE_QUOTA"
ENV_VERIFIERS = {"github_pr": "MUXD_VERIFY_GITHUB_PR", "gitlab_mr": "MUXD_VERIFY_GITLAB_MR"}
_VERIFIER_DEFAULTS = {"github_pr": TASK_VERIFY_GITHUB_PR_DEFAULT, "gitlab_mr": TASK_VERIFY_GITLAB_MR_DEFAULT}


def _int_setting(env: Mapping[str, str], name: str, default: int, low: int, high: int, unit: str) -> int:
    """As the history's settings are read, but a bad value is logged and the default kept: the
    queue's limits are not worth refusing to start over."""
    try:
        return whole_number(env, name, default, low, high, unit)
    except BadRequest as exc:
        log.error("%s: using %d", exc.message, default)
        return default


class TaskService:
    def __init__(self, db: Database, *, registry: Registry, executions: ExecutionService, spawn_pane: SpawnPane,
                 spans: SpanExport, env: dict[str, str] | None = None, moved: TaskMoved | None = None) -> None:
        settings = os.environ if env is None else env
        self.db = db
        self.pane_host = db.principal_host
        # What the dispatchers and checks work with: the panes, the history, new windows for checks.
        self.registry = registry
        self.executions = executions
        self.spawn_pane = spawn_pane
        self.spans = spans  # each check a span of its task's trace (muxd/telemetry/)
        self.max_attempts = _int_setting(settings, ENV_MAX_ATTEMPTS, TASK_MAX_ATTEMPTS_DEFAULT, 1, 1000, "claims")
        self.knowledge_quota = _int_setting(settings, ENV_KNOWLEDGE_QUOTA, KNOWLEDGE_STORED_QUOTA_DEFAULT, 0,
                                            10**9, "entries")
        self.verifiers = {kind: settings.get(name) or _VERIFIER_DEFAULTS[kind] for kind, name in ENV_VERIFIERS.items()}
        self.dispatchers: dict[str, Dispatch] = {}
        self.verifying: dict[str, asyncio.Task[None]] = {}
        self._jobs: set[asyncio.Task[None]] = set()
        self._changed: asyncio.Event | None = None
        self.moved = moved  # told of every change: the daemon's bus (a task-changed event)
        self._sweep_failures = FailureStreak(log, "returning expired leases")

    # ------------------------------------------------------------ running

    async def open(self) -> None:
        """Start the lease sweeper; resume the checks a stopped daemon left running."""
        self.start(self._sweep_leases())
        for task in await self.call(task_store.pending_verifications, "reading pending verifications"):
            self.verify(task)

    def shutdown(self) -> None:
        for dispatch in self.dispatchers.values():
            dispatch.stopping = True
        for job in list(self._jobs):
            job.cancel()

    async def stopped(self) -> None:
        """After `shutdown`: until its jobs have wound up (a check's span ends with its job), at
        most JOBS_STOP_WAIT_S."""
        if self._jobs:
            await asyncio.wait(list(self._jobs), timeout=JOBS_STOP_WAIT_S)

    def start(self, job: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(job)
        self._jobs.add(task)
        task.add_done_callback(self._job_done)
        return task

    def _job_done(self, task: asyncio.Task[None]) -> None:
        self._jobs.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task queue job failed: %r", task.exception())

    async def call(self, job: Callable[[sqlite3.Connection], T], doing: str) -> T:
        """Run a store job on the writer thread; SQLite's failures arrive as one StoreUnavailable line."""
        return await self.db.call(job, doing)

    async def _sweep_leases(self) -> None:
        while True:
            await asyncio.sleep(TASK_LEASE_SWEEP_S)
            try:
                expired = await self.expire_now()
            except Exception as exc:  # a full disk must not end the sweeping
                self._sweep_failures.failed(getattr(exc, "message", repr(exc)))
                continue
            self._sweep_failures.succeeded()
            if expired:
                log.info("%d task lease(s) ran out: back to ready", len(expired))

    async def expire_now(self) -> list[str]:
        now = time.time()
        expired = await self.call(lambda c: task_store.expire_leases(c, now, max_attempts=self.max_attempts),
                                  "returning expired leases")
        if expired:
            self.changed()
        return expired

    # ------------------------------------------------------------ the pulse

    def changed(self, task: Task | None = None) -> None:
        """The queue changed (`task` created, released, done…; None: several): wake whoever waits
        for it, and tell the bus."""
        if self.moved is not None:
            self.moved(None if task is None else task.id, None if task is None else task.state)
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_changed(self, timeout_s: float) -> bool:
        """Until the queue changes, or `timeout_s`; True if it changed."""
        if self._changed is None:
            self._changed = asyncio.Event()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout_s)
        except asyncio.TimeoutError:
            return False
        return True

    # ------------------------------------------------------------ verification

    def verify(self, task: Task) -> None:
        """Run `task`'s check (its contract's commands, or the CI verifier) unless it runs already."""
        if task.verification.kind not in RUN_KINDS or task.id in self.verifying:
            return
        job = self.start(run_check(self, task))
        self.verifying[task.id] = job
        job.add_done_callback(lambda _: self.verifying.pop(task.id, None))
