"""set-option and show-options (the option table is daemon/panes/options.py).

As tmux: the option's name decides its scope (server, session, window); `-g` sets the global
value, no `-g` the target's own (its session, or its window), `-p` the target pane's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.daemon.panes.options import Option, Scope, is_user_option, option_named
from muxd.daemon.panes.target import resolve_pane, resolve_session, resolve_window
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


def _user_scope(scope: str, kind: str) -> Scope:
    """The scope a user option (`@name`) is set or shown at: its command's -s/-w/-p."""
    return "window" if scope == "pane" else kind  # type: ignore[return-value]


@command(SetOption)
async def set_option(daemon: Daemon, req: SetOption) -> Ok:
    user_scope = _user_scope(req.scope, req.kind)
    option = option_named(req.name, user_scope)
    options = daemon.registry.options
    owner = _owner(daemon, req.scope, option.scope, req.target)
    if req.unset:
        options.unset(option.name, owner, user_scope)
    else:
        current = options.own_value(option.name, owner, user_scope)
        if req.only_if_unset and current is not None:
            raise Conflict(f"already set: {option.name}", option=option.name)
        value = req.value
        if req.append and value is not None:
            if current is None:  # appended to what it inherits (a user option inherits nothing)
                current = "" if is_user_option(option.name) else options.lookup(option.name)
            value = current + value
        options.set(option.name, value, owner, user_scope)
    if option.inert:
        return Ok(id=req.id)
    if option.name == "monitor-silence":  # silence is counted again from now, as tmux does
        daemon.alerts.reset_timers([w for s in daemon.registry.sessions for w in s.windows])
    # The status line and the prefix key show at once in every attached client, as in tmux.
    for session in daemon.registry.sessions:
        daemon.attach_hub.fit_session(session)
    return Ok(id=req.id)


@command(ShowOptions)
async def show_options(daemon: Daemon, req: ShowOptions) -> OptionList:
    kind: str = req.kind
    option: Option | None = None
    if req.name is not None:
        option = option_named(req.name, _user_scope(req.scope, req.kind))
        kind = option.scope
    elif req.scope == "pane":
        kind = "window"
    owner = _owner(daemon, req.scope, kind, req.target)
    pairs = daemon.registry.options.shown(owner, kind)  # type: ignore[arg-type]
    if option is not None:
        pairs = [(name, value) for name, value in pairs if name == option.name]
        if not pairs and is_user_option(option.name):  # as tmux: an unset user option is unknown
            raise BadRequest(f"invalid option: {option.name}", option=option.name)
    return OptionList(id=req.id, options=[OptionValue(name=name, value=value) for name, value in pairs])

