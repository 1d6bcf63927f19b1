"""Attached clients: list-clients, detach-client and switch-client, as tmux's.

A client is named by its terminal's device (`/dev/pts/3`). The current client, when no -t names
one, is the most recently active client of the caller's session (the pane it runs in), else of
the server: a `muxd detach-client` typed in a pane detaches the terminal showing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.client_side.session_actions import select_target
from muxd.daemon.commands.table import command
from muxd.daemon.panes.registry import window_of
from muxd.daemon.panes.target import resolve_pane, resolve_session
from muxd.errors import MuxdError, NotFound
from muxd.protocol.messages import ClientInfo, ClientList, DetachClient, ListClients, Ok, SwitchClient

if TYPE_CHECKING:
    from muxd.daemon.client_side.attached import AttachedClient
    from muxd.daemon.server import Daemon


def _clients(daemon: Daemon) -> list[AttachedClient]:
    return [c for c in daemon.attach_hub.clients.values() if not c.closed]


def _named(daemon: Daemon, name: str) -> AttachedClient:
    found = next((c for c in _clients(daemon) if c.name == name), None)
    if found is None:
        raise NotFound(f"can't find client: {name}", client=name)
    return found


def _current(daemon: Daemon, pane_id: str | None) -> AttachedClient:
    clients = _clients(daemon)
    if pane_id:
        try:
            session = window_of(resolve_pane(daemon.registry, pane_id)).session
        except MuxdError:
            session = None  # a pane since closed: any client
        clients = [c for c in clients if c.session is session] or clients
    if not clients:
        raise NotFound("no current client")
    return max(clients, key=lambda c: c.last_input)


@command(ListClients)
async def list_clients(daemon: Daemon, req: ListClients) -> ClientList:
    session = resolve_session(daemon.registry, req.target) if req.target else None
    clients = [c for c in _clients(daemon) if session is None or c.session is session]
    return ClientList(id=req.id, clients=[
        ClientInfo(name=c.name, session=c.session.name, columns=c.columns, lines=c.lines) for c in clients])


@command(DetachClient)
async def detach_client(daemon: Daemon, req: DetachClient) -> Ok:
    if req.session is not None:
        session = resolve_session(daemon.registry, req.session)
        chosen = [c for c in _clients(daemon) if c.session is session]
    else:
        client = _named(daemon, req.client) if req.client else _current(daemon, req.pane)
        chosen = [c for c in _clients(daemon) if c is not client] if req.all_others else [client]
    for client in chosen:
        client.detach(f"detached (from session {client.session.name})")
    return Ok(id=req.id)


@command(SwitchClient)
async def switch_client(daemon: Daemon, req: SwitchClient) -> Ok:
    client = _named(daemon, req.client) if req.client else _current(daemon, req.pane)
    session = resolve_session(daemon.registry, req.target)
    select_target(daemon.registry, session, req.target)  # `-t %4`: its window and pane become current
    client.switch_to(session)
    daemon.attach_hub.changed(session)
    return Ok(id=req.id)
