"""The asking side of an action for another host's pane (issue 30): send_task, cancel_execution and
dispatch_tasks addressed to `%N@host`, once this daemon's access check passed (the rows:
store/host_actions.py; the owner's side: host_link.py and daemon/commands/host_actions.py).

A send allocates the execution id here and writes it in the action: the caller has it at once,
and every daemon of the fleet finds the execution by it, first as the action (`from_action`:
pending while the owner has not delivered it), then as the owner's row in the shared history.
The owner's answer is waited for HOST_ACTION_ANSWER_WAIT_S at most: its refusal is the caller's
typed error; no answer (its daemon is down) leaves the action pending, applied when it starts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.config import HOST_ACTION_ANSWER_WAIT_S, HOST_EXECUTION_POLL_S
from muxd.daemon.panes.target import RemotePane
from muxd.errors import MuxdError, error_from_code
from muxd.executions.record import ACTIVE_STATUSES, Execution, new_execution_id
from muxd.executions.tracker import error_of
from muxd.protocol.fleet_messages import host_target
from muxd.store import host_actions
from muxd.store.database import transaction
from muxd.store.host_actions import TOLD_ACTION, TOLD_ANSWER, TOLD_ENDED, ActionKind, HostAction
from muxd.store.hosts import sent_from

if TYPE_CHECKING:  # a link exists only on a shared database: its module loads PostgreSQL's driver
    from muxd.daemon.work.host_link import HostLink

ReadExecution = Callable[[str], Awaitable[Execution | None]]
GRANTED_RUN = "granted_in_run"  # a request's key: the run of the owner's daemon its pane was granted in


async def ask(link: HostLink, kind: ActionKind, host: str, principal: str, request: dict[str, Any], *,
              pane_id: str | None = None, execution_id: str | None = None) -> HostAction:
    """Write action `kind` for `host` and tell it; the row once answered, or as it is after
    HOST_ACTION_ANSWER_WAIT_S (still pending: its daemon is down or slow)."""
    def insert(c: Any) -> int:
        with transaction(c):
            seq = host_actions.insert_action(c, kind, host, principal, request, pane_id=pane_id,
                                             execution_id=execution_id)
            link.tell(c, host, TOLD_ACTION, seq)
        return seq

    seq = await link.db.call(insert, f"asking host {host} to {kind}")
    deadline = time.monotonic() + HOST_ACTION_ANSWER_WAIT_S
    while True:
        heard = await link.heard(TOLD_ANSWER, seq, deadline - time.monotonic())
        action = await link.db.call(lambda c: host_actions.load_action(c, seq), f"reading action {seq}")
        assert action is not None  # nobody deletes them
        if action.state in ("done", "refused") or not heard or time.monotonic() >= deadline:
            return action


def refusal(action: HostAction) -> MuxdError:
    """The typed error `action`'s owner refused it with, saying which host refused."""
    return error_from_code(action.error_code or "internal", f"host {action.host}: {action.error_message}",
                           {**(action.error_detail or {}), "host": action.host})


def _answered(action: HostAction) -> HostAction:
    if action.state == "refused":
        raise refusal(action)
    return action


async def send(link: HostLink, pane: RemotePane, principal: str, request: dict[str, Any]) -> tuple[Execution, bool]:
    """A prompt for `pane` (another host's) sent as `principal`: (its execution, created), the
    execution pending if the owner has not answered yet."""
    execution_id = new_execution_id()
    action = _answered(await ask(link, "send", pane.host, principal, _in_run(pane, request),
                                 pane_id=pane.pane_id, execution_id=execution_id))
    return from_action(action), bool(action.answer.get("created", True)) if action.state == "done" else True


async def cancel(link: HostLink, execution: Execution, host: str, principal: str) -> Execution:
    """`execution` (running or pending on `host`) cancelled by its owner: as the owner answers,
    or as it is while the cancel waits for the owner. A prompt no daemon took yet is taken back."""
    sent = await link.db.call(lambda c: host_actions.sent_as(c, execution.id), "reading a sent prompt")
    if sent is not None and sent.state == "pending":
        if await link.db.call(lambda c: host_actions.withdraw(c, sent.seq), "taking a prompt back"):
            return from_action(msgspec.structs.replace(sent, state="withdrawn"))
    action = _answered(await ask(link, "cancel", host, principal, {}, execution_id=execution.id))
    return msgspec.convert(action.answer, Execution) if action.state == "done" else execution


async def dispatch(link: HostLink, pane: RemotePane, principal: str, request: dict[str, Any]) -> list[Any]:
    """Dispatch on `pane` (another host's): the owner's dispatchers as it answers (empty while it
    has not: the action waits for its daemon)."""
    action = _answered(await ask(link, "dispatch", pane.host, principal, _in_run(pane, request),
                                 pane_id=pane.pane_id))
    return list(action.answer or []) if action.state == "done" else []


def _in_run(pane: RemotePane, request: dict[str, Any]) -> dict[str, Any]:
    """`request`, saying the run of the owner's daemon `pane` was granted in, if it was (its owner
    refuses it in another: daemon/commands/host_actions.py)."""
    return request if pane.run is None else {**request, GRANTED_RUN: pane.run}


def from_action(action: HostAction) -> Execution:
    """The execution a send action stands for: the owner's record when it delivered it, else one
    made of the action (pending, cancelled if taken back, failed with the owner's refusal)."""
    if action.state == "done" and isinstance(action.answer, dict):
        return msgspec.convert(action.answer, Execution)
    request = action.request
    status, error = "pending", None
    if action.state == "withdrawn":
        status = "cancelled"
    elif action.state == "refused":
        status, error = "failed", error_of(action.error_code or "refused", action.error_message or "refused")
    return Execution(id=action.execution_id or "", pane_id=action.pane_id or "", agent_name=action.pane_id or "",
                     pane_key=f"{action.host}/{action.pane_id}", kind="prompt", status=status,  # type: ignore[arg-type]
                     triggered_by=request.get("triggered_by", "mcp"),
                     principal=sent_from(action.principal, action.from_host),
                     message=request.get("message"), queued_at=action.created_at, error=error,
                     completed_at=action.answered_at if status != "pending" else None,
                     task_id=request.get("task_id"), trace_id=request.get("trace_id"),
                     span_id=request.get("span_id"), attempt=request.get("attempt"),
                     idempotency_key=request.get("idempotency_key"), timeout_s=request.get("timeout_s"))


async def sent_record(link: HostLink, execution_id: str) -> Execution | None:
    """`execution_id` as its send action stands for it, when no daemon wrote its row yet."""
    action = await link.db.call(lambda c: host_actions.sent_as(c, execution_id), f"reading {execution_id}")
    return from_action(action) if action is not None else None


async def sent_running(link: HostLink, read: ReadExecution, limit: int) -> list[Execution]:
    """The prompts this daemon sent to other hosts that are still pending or running (at most
    `limit`, newest first), each as `read` finds it now, its pane named `%N@host`: the caller's
    own list of what runs shows them (list_active_executions), marked with their host."""
    found = []
    for host, execution_id in await link.db.call(lambda c: host_actions.sent_unended(c, limit),
                                                 "reading the prompts sent to other hosts"):
        execution = await read(execution_id)
        if execution is not None and execution.status in ACTIVE_STATUSES:
            found.append(msgspec.structs.replace(execution, pane_id=host_target(execution.pane_id, host)))
    return found


async def host_of(link: HostLink, execution_id: str) -> str | None:
    """The host that runs `execution_id`: its row's, else its send action's."""
    def job(c: Any) -> str | None:
        host = host_actions.execution_host(c, execution_id)
        if host is None:
            sent = host_actions.sent_as(c, execution_id)
            host = sent.host if sent is not None else None
        return host

    return await link.db.call(job, f"finding the host of {execution_id}")


async def wait_ended(link: HostLink, read: ReadExecution, execution_ids: Sequence[str], *, any_one: bool,
                     timeout_s: float) -> bool:
    """Wait until each (or any one) of other hosts' executions ended: woken by the owner's word
    of an end, its row read again every HOST_EXECUTION_POLL_S meanwhile; False if the time ran out."""
    deadline = time.monotonic() + timeout_s

    async def one(execution_id: str) -> None:
        while True:
            found = await read(execution_id)
            if found is None or found.status not in ACTIVE_STATUSES:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            await link.heard(TOLD_ENDED, execution_id, min(left, HOST_EXECUTION_POLL_S))

    jobs = [asyncio.ensure_future(one(execution_id)) for execution_id in execution_ids]
    if not jobs:
        return True
    try:
        done, _ = await asyncio.wait(jobs, timeout=max(0.0, timeout_s),
                                     return_when=asyncio.FIRST_COMPLETED if any_one else asyncio.ALL_COMPLETED)
        ended = [job for job in done if job.exception() is None]
        return bool(ended) if any_one else len(ended) == len(jobs)
    finally:
        for job in jobs:
            job.cancel()


async def all_or_any(waits: list[Awaitable[bool]], *, any_one: bool) -> bool:
    """Whether each of `waits` (or any one, `any_one`) says its executions ended."""
    if len(waits) == 1:
        return await waits[0]
    jobs = [asyncio.ensure_future(wait) for wait in waits]
    try:
        if any_one:
            for next_done in asyncio.as_completed(jobs):
                if await next_done:
                    return True
            return False
        return all(await asyncio.gather(*jobs))
    finally:
        for job in jobs:
            job.cancel()
