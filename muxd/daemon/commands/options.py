"""set-option and show-options (the option table is daemon/options.py).

As tmux: the option's name decides its scope (server, session, window); `-g` sets the global
value, no `-g` the target's own (its session, or its window), `-p` the target pane's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands import command
from muxd.daemon.options import Option, option_named
from muxd.daemon.target import resolve_pane, resolve_session, resolve_window
from muxd.errors import BadRequest, Conflict
from muxd.protocol.messages import Ok, OptionList, OptionValue, SetOption, ShowOptions

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


def _owner(daemon: Daemon, scope: str, kind: str, target: str | None) -> str | None:
    """The id of the object whose own values are meant; None for the global (or server) ones."""
    if kind == "server" or scope == "global":
        return None
    registry = daemon.registry
    if scope == "pane":
        if kind != "window":
            raise BadRequest("-p is for window and pane options")
        return resolve_pane(registry, target).id
    if kind == "window":
        return resolve_window(registry, target).id
    return resolve_session(registry, target).id


@command(SetOption)
async def set_option(daemon: Daemon, req: SetOption) -> Ok:
    option = option_named(req.name)
    options = daemon.registry.options
    owner = _owner(daemon, req.scope, option.scope, req.target)
    if req.unset:
        options.unset(option.name, owner)
    else:
        values = options.globals if owner is None else options.local.get(owner, {})
        if req.only_if_unset and option.name in values:
            raise Conflict(f"already set: {option.name}", option=option.name)
        value = req.value
        if req.append and value is not None:
            value = values.get(option.name, options.lookup(option.name)) + value
        options.set(option.name, value, owner)
    # The status line and the prefix key show at once in every attached client, as in tmux.
    for session in daemon.registry.sessions:
        daemon.attach_hub.fit_session(session)
    return Ok(id=req.id)


@command(ShowOptions)
async def show_options(daemon: Daemon, req: ShowOptions) -> OptionList:
    kind: str = req.kind
    option: Option | None = None
    if req.name is not None:
        option = option_named(req.name)
        kind = option.scope
    elif req.scope == "pane":
        kind = "window"
    owner = _owner(daemon, req.scope, kind, req.target)
    pairs = daemon.registry.options.shown(owner, kind)  # type: ignore[arg-type]
    if option is not None:
        pairs = [(name, value) for name, value in pairs if name == option.name]
    return OptionList(id=req.id, options=[OptionValue(name=name, value=value) for name, value in pairs])

