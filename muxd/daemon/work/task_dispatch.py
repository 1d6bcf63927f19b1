"""`muxd task run`: muxd as the worker loop of an agent pane that knows nothing of MCP.

When the pane's agent is at its prompt with nothing queued, its dispatcher claims the next
actionable task (as the pane's own principal, `agent:%N`, so a claim made here and one the
agent makes over MCP are the same holder), sends it as a prompt (an execution linked to the
task), renews the lease while the turn runs, then completes the task, or releases it with
the failure. A check that fails (task_verify.py) comes back to the same agent as a new
prompt with its output, max_attempts times at most, then the task is released. Several
dispatchers on one plan share the queue: the claim decides.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from muxd.config import DISPATCH_HEARTBEAT_S, EXECUTION_TIMEOUT_DEFAULT_S, TASK_LEASE_DEFAULT_S
from muxd.detectors.state import AT_PROMPT_STATES
from muxd.errors import MuxdError, TaskAlreadyClaimed, TaskInvariantViolated
from muxd.protocol.task_messages import Dispatcher
from muxd.store import task_store
from muxd.store.hosts import pane_principal
from muxd.tasks.model import Task
from muxd.telemetry.trace_ids import new_span_id, task_trace_id

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.panes.registry import Registry
    from muxd.daemon.work.executions import ExecutionService

log = logging.getLogger(__name__)
T = TypeVar("T")

IDLE_POLL_S = 0.5          # how often a dispatcher looks whether its agent is free
QUEUE_POLL_S = 5.0         # with nothing actionable, it also looks this often (leases run out unseen)
RESPONSE_KEPT_CHARS = 2000  # of the agent's answer, in the task's output


@dataclass
class Dispatch:
    pane_id: str
    plan: str | None
    principal: str
    task_id: str | None = None
    execution_id: str | None = None
    completed: int = 0
    released: int = 0
    stopping: bool = False
    job: asyncio.Task[None] | None = None

    def info(self) -> Dispatcher:
        return Dispatcher(pane_id=self.pane_id, plan=self.plan, principal=self.principal, task_id=self.task_id,
                          execution_id=self.execution_id, completed=self.completed, released=self.released,
                          stopping=self.stopping)


class QueueForDispatch(Protocol):
    """What a dispatcher uses of the task queue (TaskService): its dispatchers, limits, store,
    pulse and checks, and the panes and history it works with."""

    dispatchers: dict[str, Dispatch]
    verifying: dict[str, asyncio.Task[None]]
    max_attempts: int
    knowledge_quota: int
    registry: Registry
    executions: ExecutionService
    pane_host: str | None  # what pane principals name (store/hosts.py's pane_principal)

    def start(self, job: Coroutine[Any, Any, None]) -> asyncio.Task[None]: ...

    async def call(self, job: Callable[[sqlite3.Connection], T], doing: str) -> T: ...

    def changed(self, task: Task | None = None) -> None: ...

    async def wait_changed(self, timeout_s: float) -> bool: ...

    def verify(self, task: Task) -> None: ...


def task_prompt(task: Task) -> str:
    """What the agent is asked: the task, and the words of a failed check or a reviewer if any."""
    parts = [f"Task: {task.title}"]
    if task.description:
        parts.append(task.description)
    if task.feedback:
        parts.append(f"Your previous attempt was sent back. Fix this:\n{task.feedback}")
    return "\n\n".join(parts)


def start_dispatch(service: QueueForDispatch, pane: Pane, plan: str | None) -> Dispatch:
    existing = service.dispatchers.get(pane.id)
    if existing is not None and not existing.stopping:
        existing.plan = plan
        return existing
    dispatch = Dispatch(pane_id=pane.id, plan=plan, principal=pane_principal(pane.id, service.pane_host))
    service.dispatchers[pane.id] = dispatch
    dispatch.job = service.start(_loop(service, dispatch))
    log.info("dispatching tasks%s to pane %s", f" of plan {plan}" if plan else "", pane.id)
    return dispatch


def _pane(service: QueueForDispatch, dispatch: Dispatch) -> Pane | None:
    pane = service.registry.pane_by_id(dispatch.pane_id)
    return None if pane is None or pane.exited else pane


def _free(service: QueueForDispatch, pane: Pane) -> bool:
    """An agent CLI (not a bare shell: a task is no command line) at its prompt with nothing queued.
    (An agent that quits between this look and the send: the history does not type the task into
    the shell, its turn fails `no_agent`, and `_work` releases the task back to the queue.)"""
    run = service.executions.panes.get(pane.id)
    return (run is not None and pane.agent.is_agent and pane.agent.activity.state in AT_PROMPT_STATES
            and not run.tracker.is_busy
            and run.tracker.queue_length == 0 and run.program is None)


async def _loop(service: QueueForDispatch, dispatch: Dispatch) -> None:
    try:
        while not dispatch.stopping:
            pane = _pane(service, dispatch)
            if pane is None:
                log.info("pane %s is gone: its dispatcher stops", dispatch.pane_id)
                return
            if not _free(service, pane):
                await asyncio.sleep(IDLE_POLL_S)
                continue
            task = await _next_task(service, dispatch)
            if task is None:
                await service.wait_changed(QUEUE_POLL_S)
                continue
            await _work(service, dispatch, pane, task)
    finally:
        if service.dispatchers.get(dispatch.pane_id) is dispatch:
            del service.dispatchers[dispatch.pane_id]


async def _next_task(service: QueueForDispatch, dispatch: Dispatch) -> Task | None:
    """A task this pane holds already (sent back to it), else the first actionable one it wins."""
    held, _ = await service.call(lambda c: task_store.list_tasks(
        c, states=("claimed", "in_progress"), plan=None, claimed_by=dispatch.principal, limit=1, offset=0,
        now=time.time()), "listing held tasks")
    if held:
        return held[0]
    # One transaction: no other dispatcher can take it in between, and on PostgreSQL dispatchers
    # of other daemons each take a different task rather than race for the first (claim_next).
    task = await service.call(lambda c: task_store.claim_next(c, dispatch.principal, TASK_LEASE_DEFAULT_S,
                                                              time.time(), plan=dispatch.plan), "claiming")
    if task is not None:
        service.changed(task)
    return task


async def _work(service: QueueForDispatch, dispatch: Dispatch, pane: Pane, task: Task) -> None:
    """Prompt the agent with `task` until it is done or waits for a person. A check that keeps
    failing ends in a release, as a failed turn does (failed after `max_attempts` claims): a check
    that can never pass must not hold the pane in an endless loop of turns."""
    dispatch.task_id = task.id
    checks_failed = 0
    try:
        while True:
            if task.state == "claimed":
                task = await service.call(lambda c: task_store.update_status(
                    c, task.id, dispatch.principal, "in_progress", now=time.time()), "starting a task")
                service.changed(task)
            execution_id = await _send(service, dispatch, pane, task)
            ended = await _follow(service, dispatch, task, execution_id)
            if ended is None:
                return  # the claim was lost meanwhile: someone else has the task now
            if ended.status != "success":
                reason = f"execution {ended.id} ended {ended.status}"
                if ended.error is not None:
                    reason += f": {ended.error.message}"
                await _release(service, dispatch, task, reason)
                return
            output = {"executionId": ended.id, "response": (ended.response or "")[-RESPONSE_KEPT_CHARS:]}
            task = (await service.call(lambda c: task_store.complete(
                c, task.id, dispatch.principal, output=output, learnings=[],
                knowledge_quota=service.knowledge_quota, now=time.time()), "completing a task")).task
            service.changed(task)
            service.verify(task)
            task = await _settled(service, task)
            if task.state != "in_progress":  # done, or waiting for a person: this pane is free again
                if task.state == "done":
                    dispatch.completed += 1
                return
            checks_failed += 1
            if checks_failed >= service.max_attempts:
                await _release(service, dispatch, task, f"its check failed {checks_failed} times in a row")
                return
    except MuxdError as exc:
        log.warning("pane %s, task %s: %s", dispatch.pane_id, task.id, exc.message)
    finally:
        dispatch.task_id = dispatch.execution_id = None


async def _release(service: QueueForDispatch, dispatch: Dispatch, task: Task, reason: str) -> None:
    await service.call(lambda c: task_store.release(c, task.id, dispatch.principal, reason,
                                                    max_attempts=service.max_attempts, now=time.time()),
                       "releasing a task")
    dispatch.released += 1
    service.changed()


async def _send(service: QueueForDispatch, dispatch: Dispatch, pane: Pane, task: Task) -> str:
    # Each turn is a span of the task's trace, as its checks are (muxd/telemetry/).
    trace_id = task_trace_id(task.id)
    execution, _ = await service.executions.submit(
        pane, dispatch.principal, triggered_by="schedule", message=task_prompt(task), task_id=task.id,
        trace_id=trace_id, span_id=new_span_id() if trace_id else None, timeout_s=EXECUTION_TIMEOUT_DEFAULT_S)
    dispatch.execution_id = execution.id
    return execution.id


async def _follow(service: QueueForDispatch, dispatch: Dispatch, task: Task, execution_id: str):  # type: ignore[no-untyped-def]
    """The ended execution, renewing the task's lease while it runs; None if the claim was lost."""
    executions = service.executions
    every = min(DISPATCH_HEARTBEAT_S, (task.lease_s or TASK_LEASE_DEFAULT_S) / 3)
    while not await executions.wait([execution_id], any_one=False, timeout_s=every):
        try:
            await service.call(lambda c: task_store.update_status(c, task.id, dispatch.principal, "in_progress",
                                                                  heartbeat=True, now=time.time()), "heartbeat")
        except (TaskAlreadyClaimed, TaskInvariantViolated):
            log.warning("pane %s lost task %s while working on it: interrupting the turn", dispatch.pane_id, task.id)
            try:
                executions.cancel(execution_id)
            except MuxdError:
                pass
            return None
    return await executions.record(execution_id)


async def _settled(service: QueueForDispatch, task: Task) -> Task:
    """`task` once its check (if one runs) has decided: done, or back in progress with the output."""
    def deciding(t: Task) -> bool:
        result = t.verification_result
        return t.state == "needs_review" and result is not None and result.status in ("pending", "running")

    while deciding(task):
        checking = task.id in service.verifying
        if checking:
            await service.wait_changed(QUEUE_POLL_S)
        # Read again even when the check just ended: it records its result before it ends.
        task = await service.call(lambda c: task_store.get_task(c, task.id), "reading a task")
        if not checking:
            break
    return task


def stop_dispatch(service: QueueForDispatch, pane_id: str) -> Dispatch | None:
    dispatch = service.dispatchers.get(pane_id)
    if dispatch is not None:
        dispatch.stopping = True
        if dispatch.task_id is None and dispatch.job is not None:
            dispatch.job.cancel()  # idle: nothing to finish first
    return dispatch
