"""What a pane's screen says of a prompt muxd delivered that the agent was not seen busy with:
the three questions `ExecutionTracker` asks before it ends such a turn (is the screen read up to
date, is the prompt still in the input box, is its echo shown). Each takes the daemon's
detections by pane id and is bound to one pane."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from muxd.executions.record import Execution

if TYPE_CHECKING:
    from muxd.daemon.panes.detection import PaneDetection
    from muxd.daemon.work.pane_run import PaneRun


def screen_settled(detections: Mapping[str, PaneDetection], pane_id: str) -> bool:
    """Whether the pane's newest frame is read and its state published (always, with detection off)."""
    detection = detections.get(pane_id)
    return detection is None or detection.settled


def prompt_waiting(detections: Mapping[str, PaneDetection], pane_id: str, execution: Execution) -> bool:
    """Whether the agent's input box holds `execution`'s prompt now (its words, or its first
    line's: a box shows a long prompt wrapped, a pasted one cut), i.e. it was not submitted."""
    detection = detections.get(pane_id)
    draft = detection.runner.draft if detection is not None else None
    if not draft or not execution.message:
        return False
    return _words(draft) == _words(execution.message) or (
        _words(draft.split("\n", 1)[0]) == _words(execution.message.strip().split("\n", 1)[0]))


def turn_shown(run: PaneRun, execution: Execution) -> bool:
    """Whether the pane's rows since the turn began show the prompt's echo (always, for an
    agent muxd reads no turns of: nothing to look for)."""
    from muxd.daemon.work import execution_finish
    from muxd.executions.answers import READERS, turn_start

    agent_type = run.pane.agent.agent_type
    first_line = (execution.message or "").strip().split("\n", 1)[0]
    if agent_type not in READERS or not first_line:
        return True
    # Its first line: how CLIs echo a message of several paragraphs varies more than that.
    return turn_start(agent_type, execution_finish.turn_rows(run), first_line) is not None


def _words(text: str) -> str:
    return " ".join(text.split())
