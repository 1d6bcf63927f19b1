"""hook-event: an agent's own report of what it does, sent by `muxd hook` from its pane."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.daemon.panes.pane import Pane
from muxd.protocol.messages import HookEvent, Ok

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


@command(HookEvent, target="pane")
async def hook_event(daemon: Daemon, req: HookEvent, pane: Pane) -> Ok:
    daemon.hooks.receive(pane.id, req.agent, req.payload)
    return Ok(id=req.id)
