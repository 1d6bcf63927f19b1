"""The task queue counted for metrics: tasks per state now, who holds the held ones, and how long
the finished ones took (creation to done or failed) against fixed bounds: three grouped queries
over the tasks table, in SQL both SQLite and PostgreSQL run."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from muxd.tasks.model import FINAL_STATES, HELD_STATES, STATES


@dataclass(frozen=True)
class FinishedTally:
    """The finished tasks of one final state: `within[i]` took at most bounds[i] seconds."""

    count: int
    seconds_sum: float
    within: tuple[int, ...]


@dataclass(frozen=True)
class TaskTallies:
    by_state: dict[str, int]                # every state, zero included
    held: dict[tuple[str, str], int]        # (holder's principal, state) -> tasks held now
    finished: dict[str, FinishedTally]      # done, failed


def tally(conn: sqlite3.Connection, bounds_s: Sequence[float]) -> TaskTallies:
    """Count the queue. `bounds_s` are the duration bounds (constants, never a caller's input)."""
    by_state = dict.fromkeys(STATES, 0)
    for state, count in conn.execute("SELECT state, COUNT(*) FROM tasks GROUP BY state"):
        by_state[state] = count
    # CASE, not SQLite's sums of comparisons, GREATEST nor its MAX(a, b): one text for both databases.
    within = ", ".join(f"SUM(CASE WHEN completed_at - created_at <= {float(b)!r} THEN 1 ELSE 0 END)"
                       for b in bounds_s)
    finished = {state: FinishedTally(0, 0.0, (0,) * len(bounds_s)) for state in sorted(FINAL_STATES)}
    rows = conn.execute(
        f"SELECT state, COUNT(*), SUM(CASE WHEN completed_at > created_at THEN completed_at - created_at "
        f"ELSE 0.0 END), {within} FROM tasks "  # noqa: S608 - bounds are constants
        "WHERE state IN ('done', 'failed') AND completed_at IS NOT NULL GROUP BY state")
    for state, count, seconds, *cumulative in rows:
        finished[state] = FinishedTally(count, float(seconds), tuple(int(n or 0) for n in cumulative))
    held_states = ", ".join(f"'{state}'" for state in sorted(HELD_STATES))
    held = {(holder or "", state): count for holder, state, count in conn.execute(
        f"SELECT claimed_by, state, COUNT(*) FROM tasks WHERE state IN ({held_states}) "  # noqa: S608 - constants
        "GROUP BY claimed_by, state ORDER BY claimed_by, state")}
    return TaskTallies(by_state, held, finished)
