"""Executions and tasks as Prometheus metrics (issue 27): what ended since the daemon started,
by agent and status, with durations, tokens and cost; what runs now; the task queue by state.

Counters follow Prometheus' meaning (since this daemon started; a restart resets them, which
`rate()` expects); the queue is a gauge read from the store at scrape time, as is the histogram
of how long its finished tasks took. Labels are bounded: the agent type (a detector's name, or
"none" for a command with no agent), the kind (prompt / command), the status, the state, and
for held tasks their holder (one principal per worker holding one now).
"""

from __future__ import annotations

from collections.abc import Iterable

from muxd.config import EXECUTION_DURATION_BUCKETS_S, TASK_DURATION_BUCKETS_S
from muxd.executions.record import Execution
from muxd.prometheus import Exposition, Histogram, Labels
from muxd.store.task_tallies import TaskTallies

NO_AGENT = "none"
# Rows from before the cost's source was recorded hold only figures the agent printed.
COST_SOURCE_DEFAULT = "agent"
MS_PER_S = 1000.0


def _agent(execution: Execution) -> str:
    return execution.agent_type or NO_AGENT


class ExecutionMetrics:
    """Fed every execution once it ended and is complete (ExecutionService's `on_ended`)."""

    def __init__(self) -> None:
        self.ended: dict[Labels, int] = {}
        self.durations: dict[Labels, Histogram] = {}
        self.tokens: dict[Labels, int] = {}
        self.cost_usd: dict[Labels, float] = {}
        self.costed: dict[Labels, int] = {}

    def execution_ended(self, execution: Execution) -> None:
        agent, kind = _agent(execution), execution.kind
        key = (("agent", agent), ("kind", kind), ("status", execution.status))
        self.ended[key] = self.ended.get(key, 0) + 1
        if execution.duration_ms is not None:
            where = (("agent", agent), ("kind", kind))
            hist = self.durations.setdefault(where, Histogram(EXECUTION_DURATION_BUCKETS_S))
            hist.observe(execution.duration_ms / MS_PER_S)
        if execution.tokens_used:
            self.tokens[(("agent", agent),)] = self.tokens.get((("agent", agent),), 0) + execution.tokens_used
        if execution.cost_usd is not None:
            source = execution.cost_source or COST_SOURCE_DEFAULT
            key = (("agent", agent), ("source", source))
            self.cost_usd[key] = self.cost_usd.get(key, 0.0) + execution.cost_usd
            self.costed[(("agent", agent),)] = self.costed.get((("agent", agent),), 0) + 1

    def write(self, out: Exposition, active: Iterable[Execution]) -> None:
        """The ended executions' counters and histogram, and the `active` ones (pending, running) as a gauge."""
        out.counter("muxd_executions_total", "Executions that ended since the daemon started, by agent, kind "
                    "and status.", sorted(self.ended.items()))
        out.histogram("muxd_execution_duration_seconds", "How long ended executions ran, from start to end.",
                      dict(sorted(self.durations.items())))
        out.counter("muxd_execution_tokens_total", "Tokens the ended executions used, where the agent told.",
                    sorted(self.tokens.items()))
        out.counter("muxd_execution_cost_usd_total", "Cost of the ended executions whose cost is known, in US "
                    "dollars, by source (agent: printed by the agent; estimate: tokens at list prices).",
                    sorted(self.cost_usd.items()))
        out.counter("muxd_execution_cost_known_total", "Ended executions whose cost is known (the ones the "
                    "cost counter sums).", sorted(self.costed.items()))
        running: dict[Labels, int] = {}
        for execution in active:
            key = (("agent", _agent(execution)), ("kind", execution.kind), ("status", execution.status))
            running[key] = running.get(key, 0) + 1
        out.gauge("muxd_executions_active", "Executions pending or running now.", sorted(running.items()))


def write_task_metrics(out: Exposition, tallies: TaskTallies) -> None:
    """The queue now (muxd_tasks by state, muxd_tasks_held by holder) and its finished tasks' durations."""
    out.gauge("muxd_tasks", "Tasks in the queue now, by state.",
              [((("state", state),), count) for state, count in tallies.by_state.items()])
    out.gauge("muxd_tasks_held", "Tasks held now (claimed, in progress, in review), by holder (the principal "
              "that claimed them: agent:%N, token:NAME) and state.",
              [((("holder", holder), ("state", state)), count) for (holder, state), count in tallies.held.items()])
    series: dict[Labels, Histogram] = {}
    for state, done in tallies.finished.items():
        counts = [b - a for a, b in zip((0, *done.within), done.within)] + [done.count - (done.within[-1]
                                                                                          if done.within else 0)]
        series[(("state", state),)] = Histogram(TASK_DURATION_BUCKETS_S, counts=counts, total=done.seconds_sum)
    out.histogram("muxd_task_duration_seconds", "How long the queue's finished tasks took, from creation to "
                  "done or failed.", series)
