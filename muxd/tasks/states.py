"""The task state machine (seed 001): which moves exist, and who makes them.

    ready -> claimed -> in_progress -> needs_review -> done
                  \\___________\\______________\\____-> failed
A held task goes back to ready when its lease runs out or its holder releases it; a rejected
review sends it back to its holder (in_progress) or fails it.
"""

from __future__ import annotations

from muxd.errors import TaskInvariantViolated
from muxd.tasks.model import State

TRANSITIONS: dict[str, frozenset[str]] = {
    "ready": frozenset({"claimed", "failed"}),
    "claimed": frozenset({"in_progress", "needs_review", "done", "ready", "failed"}),
    "in_progress": frozenset({"in_progress", "needs_review", "done", "ready", "failed"}),
    # needs_review -> needs_review: a check starts running, or a holder waiting on a person completes.
    "needs_review": frozenset({"needs_review", "in_progress", "done", "ready", "failed"}),
    "done": frozenset(),
    "failed": frozenset(),
}


def allowed(current: str, target: str) -> bool:
    return target in TRANSITIONS.get(current, frozenset())


def check_transition(task_id: str, current: State, target: State) -> None:
    """Nothing when `current -> target` is a move of the machine; task.invariant_violated otherwise."""
    if not allowed(current, target):
        raise TaskInvariantViolated(f"task {task_id} cannot go from {current} to {target}",
                                    task_id=task_id, state=current, to=target)
