"""Which targets name another host's pane (`%N@host`, issue 30), and whether this daemon can
act on it: only through a database daemons share, and only for the requests that go there
(send_task, dispatch_tasks: daemon/work/host_sending.py)."""

from __future__ import annotations

from muxd.daemon.panes.target import RemotePane, pane_at_host
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
