"""`PaneRun`: what the history follows of one live pane. Its own module so that the service
(executions.py) and the completion of an ended execution (execution_finish.py) both read it
without importing each other."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from muxd.executions.prompt_marks import PromptMarkScanner
from muxd.executions.record import Execution
from muxd.executions.tracker import ExecutionTracker
from muxd.executions.transcript import TranscriptBuffer

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.executions.session_logs import SessionLogCursor


class PaneRun(msgspec.Struct):
    """What muxd follows of one live pane for the history."""

    pane: Pane
    tracker: ExecutionTracker
    marks: PromptMarkScanner = msgspec.field(default_factory=PromptMarkScanner)
    transcript: TranscriptBuffer | None = None  # None for an agent's turn: its rows are its transcript
    start_row: int = 0            # absolute row where the running execution began
    tools_at_start: int = 0       # the detector's tool-use count then
    # The agent's session log with its end marked when the running execution began (found off the loop).
    session_log: concurrent.futures.Future[SessionLogCursor | None] | None = None
    program: Execution | None = None   # the pane's own program as an execution (muxd run)
    agent_pid: int | None = None       # the agent's process when the running execution began
    timer: asyncio.TimerHandle | None = None
    tap: Callable[[bytes], None] | None = None  # the output tap on the pane now (None: no work for one)
    marks_tap: Callable[[bytes], None] | None = None  # the tap while a shell is in front (prompt marks)
    tapped_for: bool | None = None  # whether an agent was in front at the last retap
    timer_due: float | None = None
    manual: Callable[[], tuple[Execution, str | None]] | None = None  # the record a person's prompt starts

    def keep_transcript(self, transcript: TranscriptBuffer | None) -> None:
        """`transcript` is what the pane appends its output to from now on (None: nothing)."""
        if transcript is not None or self.pane.transcript is self.transcript:  # (not another run's to clear)
            self.pane.transcript = transcript
        self.transcript = transcript

    def caught_up(self) -> ExecutionTracker:
        """The tracker, given first the pane's newest state if the daemon left it out (it only
        moved the turn's counters on: `counters_only`): before what could end the turn."""
        self.tracker.take_counters(self.pane.agent)
        return self.tracker
