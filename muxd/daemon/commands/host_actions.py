"""The owning side of an action another host's daemon asked of this host's panes (issue 30;
daemon/work/host_link.py claims it and hands it here): a prompt sent, an execution cancelled,
tasks dispatched, each through the code a local request of it runs, its pane resolved here.

The asking daemon checked the caller's access by the same rules a local request passes
(AccessControl.authorize) before it wrote the action; the shared database is the boundary this
daemon trusts, as it trusts its socket's owner. So the action runs as its principal by name,
with nothing of a tier left to check: what the rules say was said on the asking host, but for
the run of this daemon a pane-scoped caller's pane was granted in, which only this daemon knows
(pane ids start again with each run). That name is the caller's qualified with the asking host
(`system@alpha`: store/hosts.sent_from), so this host's history and audit say who sent it and
from where, and no rule here grants it anything.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.daemon.access.control import Principal
from muxd.daemon.commands.executions import find_execution, submit_prompt
from muxd.daemon.commands.tasks import dispatch_pane
from muxd.daemon.panes.target import resolve_pane
from muxd.daemon.work.host_sending import GRANTED_RUN
from muxd.errors import BadRequest, Forbidden, MuxdError
from muxd.protocol.execution_messages import SubmitPrompt
from muxd.protocol.task_messages import DispatchTasks
from muxd.store.audit import args_sha256
from muxd.store.audit_row import AuditRow
from muxd.store.execution_store import EVERYTHING
from muxd.store.host_actions import HostAction
from muxd.store.hosts import sent_from

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


# The MCP tool each action stands for: the name the asking host's audit gives the call too.
TOOL_OF = {"send": "send_task", "cancel": "cancel_execution", "dispatch": "dispatch_tasks"}


async def apply(daemon: Daemon, action: HostAction) -> Any:
    """What `action` did, as JSON (the execution sent or cancelled, the dispatchers); the
    MuxdError it is refused with (an unknown pane: not_found, as a local request hears). Either
    way an audit row of this host says who asked it, from which host."""
    started = time.monotonic()
    try:
        answer = await _carry_out(daemon, action)
    except MuxdError as exc:
        _audit(daemon, action, started, exc.code)
        raise
    _audit(daemon, action, started, None)
    return answer


def _audit(daemon: Daemon, action: HostAction, started: float, error_code: str | None) -> None:
    daemon.access.audit(AuditRow(
        ts=time.time(), principal=sent_from(action.principal, action.from_host), kind="host",
        tool=TOOL_OF.get(action.kind, action.kind), args_sha256=args_sha256(action.request),
        status="ok" if error_code is None else "error", error_code=error_code, rows=0,
        latency_ms=(time.monotonic() - started) * 1000))


async def _carry_out(daemon: Daemon, action: HostAction) -> Any:
    # Checked on the asking host (see the module); recorded as who asked from where.
    principal = Principal(sent_from(action.principal, action.from_host), "admin")
    if action.kind == "cancel":
        execution = await find_execution(daemon, action.execution_id or "", EVERYTHING)
        return msgspec.to_builtins(daemon.executions.cancel(execution.id))
    request = {key: value for key, value in action.request.items() if key != GRANTED_RUN}
    granted_in = action.request.get(GRANTED_RUN)
    if granted_in is not None and (daemon.fleet is None or granted_in != daemon.fleet.started_at):
        # Pane ids start again with each run: the pane granted is gone, whatever has its id now.
        raise Forbidden(f"{action.pane_id}@{action.host} was granted to {principal.name} in an earlier run of "
                        "this host's daemon: grant it again", target=action.pane_id)
    pane = resolve_pane(daemon.registry, action.pane_id)
    if action.kind == "send":
        req = msgspec.convert({**request, "id": 0, "target": action.pane_id}, SubmitPrompt)
        execution, created = await submit_prompt(daemon, req, pane, principal, execution_id=action.execution_id)
        return {**msgspec.to_builtins(execution), "created": created}
    if action.kind == "dispatch":
        req = msgspec.convert({**request, "id": 0, "target": action.pane_id}, DispatchTasks)
        return msgspec.to_builtins(dispatch_pane(daemon, req, pane))
    raise BadRequest(f"no such action: {action.kind}", kind=action.kind)
