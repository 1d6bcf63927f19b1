"""Which targets name another host's pane (`%N@host`, issue 30), and whether this daemon can
act on it: only through a database daemons share, and only for the requests that go there
(send_task, dispatch_tasks: daemon/work/host_sending.py); and the id a pane scope keeps for one."""

from __future__ import annotations

from muxd.daemon.panes.registry import Registry
from muxd.daemon.panes.target import RemotePane, pane_at_host, resolve_pane
from muxd.errors import BadRequest, HostUnreachable


def other_hosts_pane(target: str | None, what: str, *, remote: bool, host: str, shared: bool) -> RemotePane | None:
    """The pane of a host other than `host` that `target` names (None: a pane of this daemon's,
    or not a pane); HostUnreachable when this daemon's store is not `shared`, BadRequest when
    the request `what` acts on this host's panes only (not `remote`)."""
    at = pane_at_host(target)
    if at is None or at.host == host:
        return None
    if not shared:
        raise HostUnreachable(f"host {at.host} is not reachable: this daemon's store is not shared "
                              "(MUXD_DB=postgresql://… shares one between hosts)", host=at.host)
    if not remote:
        raise BadRequest(f"{what} acts on this host's panes only: {target} is a pane of host {at.host}",
                         field="target", host=at.host)
    return at


def scope_pane_id(registry: Registry, target: str, *, host: str, shared: bool) -> str:
    """The id a pane scope (a token's panes, a grant) keeps for pane `target`: this host's pane's
    (%N, NotFound for none), or `%N@host` for another host's, which AccessControl.authorize matches
    against a remote target by that name. Another host's pane is not looked up: its daemon may be
    down, and a grant of a pane it does not have lets nothing happen there (its refusal is
    not_found); HostUnreachable when this daemon's store is not shared."""
    elsewhere = other_hosts_pane(target, "a pane scope", remote=True, host=host, shared=shared)
    if elsewhere is not None:
        return elsewhere.qualified
    at = pane_at_host(target)
    return resolve_pane(registry, at.pane_id if at is not None else target).id
