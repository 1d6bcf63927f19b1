"""bind-key, unbind-key and list-keys' view of them (the tables are daemon/client_side/key_bindings.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.errors import BadRequest
from muxd.protocol.messages import BindKey, KeyBindingInfo, KeyBindingList, ListKeys, Ok

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


@command(BindKey)
async def bind_key(daemon: Daemon, req: BindKey) -> Ok:
    bindings = daemon.registry.key_bindings
    if req.all_keys:
        bindings.unbind_all(req.table)
    elif req.key is None:
        raise BadRequest("a key is needed")
    elif req.command is None:
        bindings.unbind(req.table, req.key)
    elif not req.command.strip():
        raise BadRequest("a command is needed")
    else:
        bindings.bind(req.table, req.key, req.command, req.repeat)
    return Ok(id=req.id)


@command(ListKeys)
async def list_keys(daemon: Daemon, req: ListKeys) -> KeyBindingList:
    bindings = daemon.registry.key_bindings
    listed = [KeyBindingInfo(table=b.table, key=b.key, command=b.command, repeat=b.repeat)  # type: ignore[arg-type]
              for b in bindings.listed()]
    return KeyBindingList(id=req.id, bindings=listed, defaults_unbound=bindings.defaults_unbound,
                          tables_cleared=sorted(bindings.cleared))
