"""set-hook and show-hooks: tmux's hooks on events (the arrays are daemon/panes/hook_arrays.py,
what runs them daemon/attention/hooks_runner.py).

As tmux, the hook's name decides its level: a session hook is set on the target's session or
globally (-g); a window hook on the target pane (-p), its window, or globally (-g). Without a
name, show-hooks lists a level as its flags say (-p the pane's, -w the window's, else the
session's; -g the global ones).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from muxd.daemon.attention.agent_events import placement
from muxd.daemon.commands.table import command
from muxd.daemon.core.cli_lines import checked_line
from muxd.daemon.panes.hook_arrays import HOOK_SCOPES, HookScope, hook_named
from muxd.daemon.panes.target import resolve_pane, resolve_session, resolve_window
from muxd.errors import BadRequest
from muxd.protocol.event_messages import DaemonEvent
from muxd.protocol.messages import HookList, HookValue, Ok, SetHook, ShowHooks

if TYPE_CHECKING:
    from muxd.daemon.panes.registry import Registry
    from muxd.daemon.server import Daemon


def _owner(registry: Registry, scope: HookScope, req: SetHook | ShowHooks) -> str | None:
    """The id of the level a named hook is set or shown at (None: the global one), tmux's
    options_scope_from_name."""
    if scope == "window" and req.pane:
        return resolve_pane(registry, req.target).id
    if req.global_scope:
        return None
    if scope == "window":
        return resolve_window(registry, req.target).id
    return resolve_session(registry, req.target).id


@command(SetHook)
async def set_hook(daemon: Daemon, req: SetHook) -> Ok:
    name, index = hook_named(req.name)
    registry = daemon.registry
    if req.run_now:
        # As tmux's set-hook -R: the hook that the target would run, with only #{hook} to expand.
        pane = resolve_pane(registry, req.target) if req.target or registry.sessions else None
        where = placement(pane) if pane is not None else {}
        daemon.hook_runner.run(DaemonEvent(kind=name, at=time.time(), **where), {"hook": name})
        return Ok(id=req.id)
    owner = _owner(registry, HOOK_SCOPES[name], req)
    hooks = registry.options.hooks
    if req.unset:
        hooks.unset(name, owner, index)
    elif req.command is None:
        raise BadRequest("empty value", option=name)
    else:
        hooks.set(name, owner, checked_line(req.command, req.tmux_names), index, req.append)
    return Ok(id=req.id)


@command(ShowHooks)
async def show_hooks(daemon: Daemon, req: ShowHooks) -> HookList:
    registry = daemon.registry
    hooks = registry.options.hooks
    if req.name is None:
        scope: HookScope = "window" if req.pane or req.window else "session"
        owner = None if req.global_scope and not req.pane else _owner(registry, scope, req)
        rows = hooks.shown(owner, scope)
    else:
        name, index = hook_named(req.name)
        items = hooks.own(name, _owner(registry, HOOK_SCOPES[name], req))
        if items is None:  # not set at this level: nothing, as tmux
            rows = []
        elif index is not None:
            rows = [(name, index, items.get(index, ""))]
        else:
            rows = [(name, i, items[i]) for i in sorted(items)] if items else [(name, None, "")]
    return HookList(id=req.id, hooks=[HookValue(name=n, index=i, command=c) for n, i, c in rows])
