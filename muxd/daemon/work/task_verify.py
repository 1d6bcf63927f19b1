"""A task's check, run as an execution in a pane of its own (seed 001 `commands`, `github_pr`,
`gitlab_mr`): its exit status decides. Passed: the task is done. Failed: it goes back to its
holder with the tail of the output. The window goes once the execution is in the history."""

from __future__ import annotations

import asyncio
import logging
import shlex
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from muxd.config import TASK_VERIFY_OUTPUT_MAX_CHARS, TASK_VERIFY_TIMEOUT_S
from muxd.daemon.work.background_run import SpawnPane, run_in_background_window
from muxd.errors import MuxdError
from muxd.executions.record import Execution
from muxd.executions.transcript import render
from muxd.protocol.messages import Spawn
from muxd.store import task_store
from muxd.tasks.model import Task, VerificationResult
from muxd.telemetry.spans import Check
from muxd.telemetry.trace_ids import new_span_id

if TYPE_CHECKING:
    from muxd.daemon.panes.registry import Registry
    from muxd.daemon.work.executions import ExecutionService
    from muxd.telemetry.export import SpanExport

log = logging.getLogger(__name__)
T = TypeVar("T")

# After its time limit the check gets C-c, and this long to end before it is killed.
CANCEL_GRACE_S = 10.0


class QueueForChecks(Protocol):
    """What a check uses of the task queue (TaskService): its verifiers, its store, its pulse, and
    the panes and history the check runs in."""

    verifiers: dict[str, str]
    registry: Registry
    executions: ExecutionService
    spawn_pane: SpawnPane
    spans: SpanExport

    async def call(self, job: Callable[[sqlite3.Connection], T], doing: str) -> T: ...

    def changed(self, task: Task | None = None) -> None: ...


def check_command(task: Task, verifiers: dict[str, str]) -> str:
    """The shell line that checks `task`; ValueError saying why there is none."""
    contract = task.verification
    if contract.kind == "commands":
        if not contract.commands:
            raise ValueError("the verification contract has no commands")
        return " && ".join(f"( {line} )" for line in contract.commands)
    if not task.external_ref:
        raise ValueError(f"a {contract.kind} check needs the task's externalRef (a PR or MR)")
    return verifiers[contract.kind].replace("{externalRef}", shlex.quote(task.external_ref))


def tail(text: str, limit: int = TASK_VERIFY_OUTPUT_MAX_CHARS) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else "…" + text[-limit:]


async def run_check(service: QueueForChecks, task: Task) -> None:
    """Run `task`'s check and record its verdict; the check is a span of the task's trace, its
    execution that span's child (whose pane gets it as TRACEPARENT)."""
    check = service.spans.check_started(task)
    try:
        result = await _checked(service, task, check)
    except asyncio.CancelledError:  # the daemon stops: the check's span ends too (its command's has a parent)
        service.spans.check_ended(check, None)
        raise
    service.spans.check_ended(check, result)


async def _checked(service: QueueForChecks, task: Task, check: Check) -> VerificationResult:
    try:
        line = check_command(task, service.verifiers)
    except ValueError as exc:
        return await _record(service, task, VerificationResult(status="failed", output=str(exc), at=time.time()))
    registry = service.registry
    # The check is its author's command (create_task let only those who may `run` write one), run
    # for whoever completed the task: the execution is the author's, linked to the task.
    author = task.created_by or "system"
    try:
        pane, execution = run_in_background_window(
            registry, service.spawn_pane, service.executions, Spawn(command=["/bin/sh", "-c", line], cwd=task.verification.cwd, record_as="cli",
                          env={"MUXD_TASK_ID": task.id}),
            window_name=f"verify-{task.id[:8]}",
            link={"triggered_by": "schedule", "principal": author, "task_id": task.id, "message": line,
                  "trace_id": check.trace_id, "span_id": new_span_id()})
    except MuxdError as exc:
        return await _record(service, task, VerificationResult(status="failed", output=f"the check could not "
                                                               f"start: {exc.message}", at=time.time()))
    service.spans.check_runs(check, execution.id)
    await _record(service, task, VerificationResult(status="running", execution_id=execution.id, at=time.time()))
    ended = await _await_end(service, execution, task.verification.timeout_s or TASK_VERIFY_TIMEOUT_S)
    passed = ended is not None and ended.status == "success"
    output = None if passed else await _output_of(service, execution.id, ended)
    result = await _record(service, task, VerificationResult(
        status="passed" if passed else "failed", execution_id=execution.id,
        exit_code=ended.exit_code if ended is not None else None, output=output, at=time.time()))
    if any(p is pane for p in registry.all_panes()):  # a person may have closed it already
        registry.remove_pane(pane)
    return result


async def _await_end(service: QueueForChecks, execution: Execution, timeout_s: float) -> Execution | None:
    executions = service.executions
    if not await executions.wait([execution.id], any_one=False, timeout_s=timeout_s):
        log.warning("verification %s ran past %.0f s: interrupting it", execution.id, timeout_s)
        try:
            executions.cancel(execution.id)
        except MuxdError:
            pass
        await executions.wait([execution.id], any_one=False, timeout_s=CANCEL_GRACE_S)
    return await executions.record(execution.id)


async def _output_of(service: QueueForChecks, execution_id: str, ended: Execution | None) -> str:
    stored = await service.executions.transcript(execution_id)
    try:
        text = await asyncio.to_thread(render, stored) if stored is not None else ""
    except ValueError:  # a damaged transcript: the check is judged on its end alone
        text = ""
    if not text.strip() and ended is not None and ended.error is not None:
        text = ended.error.message
    return tail(text) or f"the check ended {ended.status if ended else 'without a record'}"


async def _record(service: QueueForChecks, task: Task, result: VerificationResult) -> VerificationResult:
    """`result`, recorded (it is returned whether or not the store took it)."""
    try:
        await service.call(lambda c: task_store.record_verification(c, task.id, result, time.time()),
                           f"recording the verification of task {task.id}")
    except MuxdError as exc:
        log.error("task %s: the verification could not be recorded: %s", task.id, exc.message)
        return result
    if result.status != "running":
        log.info("task %s: verification %s", task.id, result.status)
        service.changed()
    return result
