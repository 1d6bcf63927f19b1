"""Agent commands: the compact summary of a pane (seed 002), served from state already kept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.summaries import agent_summary
from muxd.errors import BadRequest
from muxd.protocol.messages import Summary, SummaryReply

if TYPE_CHECKING:
    from muxd.daemon.server import Daemon

SUMMARY_OUTPUT_LINES_MAX = 50
__all__ = ["agent_summary", "summary"]


@command(Summary, target="pane")
async def summary(daemon: Daemon, req: Summary, pane: Pane) -> SummaryReply:
    if not 1 <= req.output_lines <= SUMMARY_OUTPUT_LINES_MAX:
        raise BadRequest(f"output_lines {req.output_lines} is out of range 1..{SUMMARY_OUTPUT_LINES_MAX}")
    return SummaryReply(id=req.id, summary=agent_summary(
        pane, include_recent_output=req.include_recent_output, output_lines=req.output_lines))
