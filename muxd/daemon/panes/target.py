"""One resolver for every target string, as in tmux: `session`, `session:window`,
`session:window.pane`, `$N`, `@N`, `%N`, or a pane's name. No target means the newest session.
On a database daemons share, `%N@host` names pane %N of that host's daemon (`pane_at_host`):
this host's is resolved here as `%N`, another's is a `RemotePane` (daemon/work/host_sending.py).

`resolve(registry, kind, target)` is what the dispatcher calls once per request, before the
access check: the handler then gets the very object that was checked (muxd/daemon/core/connection.py).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.registry import Registry, Session, Window
from muxd.errors import NotFound
from muxd.protocol.fleet_messages import HOST_TARGET, host_target

TargetKind = Literal["pane", "window", "session"]
Resolved = Pane | Window | Session


class RemotePane(msgspec.Struct, frozen=True):
    """Pane `pane_id` of another host's daemon, as a target names it (`%3@beta`)."""

    pane_id: str
    host: str
    # For a pane-scoped principal: the run of `host`'s daemon (store/fleet.host_run) in which the
    # pane was granted or bound to it; that daemon refuses once it runs anew (its pane ids restart).
    run: float | None = None

    @property
    def qualified(self) -> str:
        return host_target(self.pane_id, self.host)


def pane_at_host(target: str | None) -> RemotePane | None:
    """The pane and host of a `%N@host` target; None for any other target."""
    found = HOST_TARGET.fullmatch(target or "")
    return RemotePane(found[1], found[2]) if found else None


def _number(text: str, prefix: str) -> int | None:
    if text.startswith(prefix) and text[1:].isdigit():
        return int(text[1:])
    return None


def _pane_by_id(registry: Registry, target: str) -> Pane:
    """`%N`; anything else starting with `%` (`%x`, `%-1`, `%`) names no pane."""
    number = _number(target, "%")
    if number is not None:
        for pane in registry.all_panes():
            if pane.number == number:
                return pane
    raise NotFound(f"can't find pane: {target}", target=target)


def resolve_session(registry: Registry, target: str | None) -> Session:
    if not registry.sessions:
        raise NotFound("no sessions", target=target)
    if not target:
        return registry.sessions[-1]
    session_part = target.split(":", 1)[0] if ":" in target else target
    number = _number(session_part, "$")
    if number is not None:
        found = next((s for s in registry.sessions if s.number == number), None)
    elif session_part.startswith(("%", "@")):
        return _window_for(registry, target).session
    else:
        found = registry.session_named(session_part)
        if found is None and ":" not in target:
            pane = registry.pane_named(target)
            if pane is not None:
                return _window_of(pane).session
    if found is None:
        raise NotFound(f"can't find session: {session_part}", target=target)
    return found


def _window_of(pane: Pane) -> Window:
    assert isinstance(pane.window, Window)
    return pane.window


def _window_for(registry: Registry, target: str) -> Window:
    """The window of `@N`, or of the pane `%N`."""
    if target.startswith("%"):
        return _window_of(_pane_by_id(registry, target))
    number = _number(target, "@")
    for session in registry.sessions:
        for window in session.windows:
            if number is not None and window.number == number:
                return window
    raise NotFound(f"can't find window: {target}", target=target)


def _window_in(session: Session, part: str, target: str) -> Window:
    if part == "":
        window = session.active_window
    elif part.startswith("@"):
        window = next((w for w in session.windows if w.id == part), None)
    elif part.isdigit():
        window = next((w for w in session.windows if w.index == int(part)), None)
    else:
        window = next((w for w in session.windows if w.name == part), None)
    if window is None:
        raise NotFound(f"can't find window: {part}", target=target)
    return window


def resolve_window(registry: Registry, target: str | None) -> Window:
    if target and target.startswith(("@", "%")):
        return _window_for(registry, target)
    if target and ":" not in target and registry.session_named(target) is None:
        pane = registry.pane_named(target)
        if pane is not None:
            return _window_of(pane)
    session = resolve_session(registry, target)
    part = target.split(":", 1)[1] if target and ":" in target else ""
    if "." in part:
        head, tail = part.rsplit(".", 1)
        if tail.isdigit():
            part = head
    return _window_in(session, part, target or "")


def resolve_pane(registry: Registry, target: str | None) -> Pane:
    if target and target.startswith("%"):
        return _pane_by_id(registry, target)
    if target and ":" not in target and not target.startswith(("$", "@")):
        if registry.session_named(target) is None:
            pane = registry.pane_named(target)
            if pane is not None:
                return pane
    window = resolve_window(registry, target)
    pane_part = None
    if target and ":" in target:
        after = target.split(":", 1)[1]
        if "." in after and after.rsplit(".", 1)[1].isdigit():
            pane_part = int(after.rsplit(".", 1)[1])
    if pane_part is None:
        if window.active_pane is None:
            raise NotFound(f"window {window.id} has no panes", target=target)
        return window.active_pane
    pane = registry.pane_at(window, pane_part)
    if pane is None:
        raise NotFound(f"can't find pane: {target}", target=target)
    return pane


_RESOLVERS = {"pane": resolve_pane, "window": resolve_window, "session": resolve_session}


def resolve(registry: Registry, kind: TargetKind, target: str | None) -> Resolved:
    """What `target` names as a `kind` (raises NotFound)."""
    return _RESOLVERS[kind](registry, target)


def panes_of(resolved: Resolved) -> list[Pane]:
    """The panes a resolved target acts on: the pane, or every pane of the window / session."""
    if isinstance(resolved, Pane):
        return [resolved]
    if isinstance(resolved, Window):
        return list(resolved.panes)
    return resolved.panes()
