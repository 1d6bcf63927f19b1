"""Completing an ended execution: what the screen showed during it (taken at once, on the loop,
before the screen moves on) and what needs I/O (the agent's session log), merged into the record
with the source of each field."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from muxd.executions.record import Execution

if TYPE_CHECKING:
    from muxd.daemon.executions import PaneRun
    from muxd.daemon.server import Daemon

# Tools whose argument is a file they write (Claude Code's names; Codex reports edits as Edit).
FILE_WRITING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Update", "Create"})
_CALL = re.compile(r"^(?P<name>[A-Za-z][\w.-]*)\((?P<arg>.*)\)\s*$")
TOOL_CALLS_KEPT = 100


@dataclass
class TurnSnapshot:
    """What the pane showed of one execution when it ended."""

    lines: list[str] = field(default_factory=list)   # rows from its first to the bottom, wraps joined
    tool_calls: list[str] = field(default_factory=list)
    agent_type: str | None = None


def snapshot(daemon: Daemon, run: PaneRun, execution: Execution) -> TurnSnapshot:
    """The screen's part of `execution` (a prompt's turn), read now."""
    if execution.kind != "prompt":
        return TurnSnapshot()
    pane = run.pane
    emulator = pane.emulator
    start = max(run.start_row - emulator.rows_scrolled, -emulator.history_size)
    lines = emulator.capture(start, join_wrapped=True).split("\n")
    calls: list[str] = []
    detection = daemon.detections.get(pane.id)
    if detection is not None:
        runner = detection.runner
        new = min(runner.tools_counted - run.tools_at_start, len(runner.tool_uses), TOOL_CALLS_KEPT)
        calls = [sighting.signature for sighting in list(runner.tool_uses)[len(runner.tool_uses) - new:]] if new > 0 else []
    return TurnSnapshot(lines=lines, tool_calls=calls, agent_type=pane.agent.agent_type)


def files_written(tool_calls: list[str]) -> list[str]:
    """The files that Write/Edit-like calls name, in order, each once."""
    found: list[str] = []
    for call in tool_calls:
        match = _CALL.match(call)
        if match and match.group("name") in FILE_WRITING_TOOLS:
            path = match.group("arg").strip()
            if path and path not in found:
                found.append(path)
    return found


async def finalize(execution: Execution, shot: TurnSnapshot) -> Execution:
    """`execution` completed with what the snapshot (and the agent's log, where it keeps one) say."""
    if execution.kind != "prompt":
        return execution
    sources = dict(execution.sources)
    fields: dict[str, object] = {}
    if shot.agent_type and execution.agent_type is None:
        fields["agent_type"] = shot.agent_type
    if shot.tool_calls:
        fields["tool_calls"] = shot.tool_calls
        fields["files_written"] = files_written(shot.tool_calls)
        sources["tool_calls"] = sources["files_written"] = "screen"
    fields["sources"] = sources
    return msgspec.structs.replace(execution, **fields)  # type: ignore[arg-type]
