"""`DetectionSchedule`: when a pane's detection runs. Apart from the runner (the looking), so a
daemon can schedule a pane's first look without importing the detectors."""

from __future__ import annotations

DETECT_MIN_INTERVAL_S = 0.1     # at most this often while output flows
DETECT_QUIET_DELAY_S = 0.05     # and once this long after output stops
DETECT_MAX_INTERVAL_S = 0.4     # the slowest pace while the state holds (slower misses short phases)
# The share of a pane's time its detection may take: a look that cost c seconds is followed by
# the next no sooner than c / DETECT_COST_SHARE later (at most DETECT_SLOW_INTERVAL_MAX_S).
# A slow machine looks less often; it never throws an answer away, so the same screen gives
# the same state however loaded the machine is.
DETECT_COST_SHARE = 0.25
DETECT_SLOW_INTERVAL_MAX_S = 2.0


class DetectionSchedule:
    """When to run detection for one pane. Pure: callers pass the time.

    At most every `interval` while output flows, and `quiet_delay_s` after output when the
    pane was quiet. The interval starts at DETECT_MIN_INTERVAL_S and doubles,
    up to DETECT_MAX_INTERVAL_S, while looks keep finding nothing new (an agent that thinks for
    minutes redraws its spinner ten times a second); any change brings it back down. A look
    that cost `cost_s` is followed by the next no sooner than cost_s / DETECT_COST_SHARE later:
    the work is budgeted by looking less often, never by dropping what a look found."""

    def __init__(self, min_interval_s: float = DETECT_MIN_INTERVAL_S,
                 quiet_delay_s: float = DETECT_QUIET_DELAY_S,
                 max_interval_s: float = DETECT_MAX_INTERVAL_S) -> None:
        self.min_interval_s = min_interval_s
        self.max_interval_s = max(max_interval_s, min_interval_s)
        self.quiet_delay_s = quiet_delay_s
        self.interval_s = min_interval_s
        self.cost_gap_s = 0.0  # the least time after the last run its cost asks for
        self.last_run = float("-inf")
        self.due: float | None = None

    def output(self, now: float) -> float | None:
        """Output arrived at `now`. Returns when to run next if no run was due yet (else None)."""
        return self.again(now)

    def again(self, now: float) -> float | None:
        """Look once more soon although nothing was written (a state waits for its second look)."""
        if self.due is not None:
            return None
        self.due = max(now + self.quiet_delay_s, self.last_run + max(self.interval_s, self.cost_gap_s))
        return self.due

    def ran(self, now: float, *, changed: bool = True, cost_s: float = 0.0) -> None:
        """A look ran at `now`, found a change (or not) and took `cost_s` seconds of work."""
        self.last_run = now
        self.due = None
        self.interval_s = self.min_interval_s if changed else min(self.interval_s * 2, self.max_interval_s)
        self.cost_gap_s = min(max(cost_s, 0.0) / DETECT_COST_SHARE, DETECT_SLOW_INTERVAL_MAX_S)
