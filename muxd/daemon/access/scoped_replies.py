"""What a pane-scoped principal's listings keep (daemon/access/control.py cuts every reply with
it): its panes, the sessions and windows they are in, counts of those only. Of the fleet, the
other hosts' panes granted to it (`%N@host`) while the run of their daemon they were granted in
lasts (a daemon's next run numbers its panes anew), and those panes' hosts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.protocol import messages as m

if TYPE_CHECKING:
    from muxd.daemon.panes.registry import Registry


def visible_part_of(reply: Any, registry: Registry, visible: set[str],
                    runs: Mapping[str, float] | None = None) -> Any:
    """`reply` as one who sees only the panes `visible` gets it (unchanged when it lists none);
    `runs`: the run of its daemon each other host's pane was granted in."""
    if isinstance(reply, m.PaneList):
        return msgspec.structs.replace(reply, panes=[p for p in reply.panes if p.id in visible])
    if isinstance(reply, m.SessionList):
        return msgspec.structs.replace(reply, sessions=_visible_sessions(reply.sessions, registry, visible))
    if isinstance(reply, m.WindowList):
        return msgspec.structs.replace(reply, windows=_visible_windows(reply.windows, registry, visible))
    if isinstance(reply, m.FleetList):
        runs = runs or {}
        started = {h.host: h.started_at for h in reply.hosts}
        panes = [p for p in reply.panes
                 if p.target in visible and runs.get(p.target, started.get(p.host)) == started.get(p.host)]
        hosts = {p.host for p in panes}
        return msgspec.structs.replace(reply, hosts=[h for h in reply.hosts if h.host in hosts], panes=panes)
    if isinstance(reply, m.Status):
        panes = [p for p in registry.all_panes() if p.id in visible]
        sessions = {id(p.window.session) for p in panes if p.window is not None}  # type: ignore[attr-defined]
        return msgspec.structs.replace(reply, panes=len(panes), sessions=len(sessions))
    return reply


def _visible_sessions(sessions: list[m.SessionInfo], registry: Registry, visible: set[str]) -> list[m.SessionInfo]:
    out = []
    for info in sessions:
        session = next((s for s in registry.sessions if s.id == info.id), None)
        if session is None:
            continue
        windows = [w for w in session.windows if any(p.id in visible for p in w.panes)]
        if windows:
            panes = sum(1 for w in windows for p in w.panes if p.id in visible)
            # The needs counted there may be of panes this token does not see.
            out.append(msgspec.structs.replace(info, windows=len(windows), panes=panes, needs={}))
    return out


def _visible_windows(windows: list[m.WindowInfo], registry: Registry, visible: set[str]) -> list[m.WindowInfo]:
    by_id = {w.id: w for s in registry.sessions for w in s.windows}
    out = []
    for info in windows:
        window = by_id.get(info.id)
        count = sum(1 for p in window.panes if p.id in visible) if window is not None else 0
        if count:
            hidden = window is not None and count < len(window.panes)  # its agent flags may be theirs
            out.append(msgspec.structs.replace(info, panes=count, agent_flags="" if hidden else info.agent_flags))
    return out
