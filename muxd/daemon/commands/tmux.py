"""Watching panes that run in tmux: tmux-watch adopts them, tmux-unwatch lets them go
(daemon/tmux/watch.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.daemon.tmux.discovery import server_args
from muxd.protocol.messages import PaneList, Released, TmuxUnwatch, TmuxWatch

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon


@command(TmuxWatch)
async def tmux_watch(daemon: Daemon, req: TmuxWatch) -> PaneList:
    panes = await daemon.tmux.watch(server_args(req.socket_name, req.socket_path), req.tmux_target)
    return PaneList(id=req.id, panes=[daemon.registry.pane_info(p) for p in panes if p.window is not None])


@command(TmuxUnwatch)
async def tmux_unwatch(daemon: Daemon, req: TmuxUnwatch) -> Released:
    released = await daemon.tmux.unwatch(server_args(req.socket_name, req.socket_path), req.tmux_target)
    return Released(id=req.id, panes=released)
