"""The owning side of an action another host's daemon asked of this host's panes (issue 30;
daemon/work/host_link.py claims it and hands it here): a prompt sent, an execution cancelled,
tasks dispatched, each through the code a local request of it runs, its pane resolved here.

The asking daemon checked the caller's access by the same rules a local request passes
(AccessControl.authorize) before it wrote the action; the shared database is the boundary this
daemon trusts, as it trusts its socket's owner. So the action runs as its principal by name,
with nothing of a tier left to check: what the rules say was said on the asking host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from muxd.daemon.access.control import Principal
from muxd.daemon.commands.executions import find_execution, submit_prompt
from muxd.daemon.commands.tasks import dispatch_pane
from muxd.daemon.panes.target import resolve_pane
from muxd.errors import BadRequest
from muxd.protocol.execution_messages import SubmitPrompt
from muxd.protocol.task_messages import DispatchTasks
from muxd.store.execution_store import EVERYTHING
from muxd.store.host_actions import HostAction

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


async def apply(daemon: Daemon, action: HostAction) -> Any:
    """What `action` did, as JSON (the execution sent or cancelled, the dispatchers); the
    MuxdError it is refused with (an unknown pane: not_found, as a local request hears)."""
    principal = Principal(action.principal, "admin")  # checked on the asking host (see the module)
    if action.kind == "cancel":
        execution = await find_execution(daemon, action.execution_id or "", EVERYTHING)
        return msgspec.to_builtins(daemon.executions.cancel(execution.id))
    pane = resolve_pane(daemon.registry, action.pane_id)
    if action.kind == "send":
        req = msgspec.convert({**action.request, "id": 0, "target": action.pane_id}, SubmitPrompt)
        execution, created = await submit_prompt(daemon, req, pane, principal, execution_id=action.execution_id)
        return {**msgspec.to_builtins(execution), "created": created}
    if action.kind == "dispatch":
        req = msgspec.convert({**action.request, "id": 0, "target": action.pane_id}, DispatchTasks)
        return msgspec.to_builtins(dispatch_pane(daemon, req, pane))
    raise BadRequest(f"no such action: {action.kind}", kind=action.kind)
