"""The output shapes of the execution tools (seeds 000 and 004) and the task-history tools
(seed 003), as TypedDicts: the SDK publishes each as the tool's `outputSchema` and checks every
result against it. Field for field as execution_views builds them.

Words mean one thing in all of them: `failed` counts (and `status=failed` selects) the failure
family, failed + timeout + interrupted, while each row keeps its exact `status`; agents' prompts
and commands (muxd run windows, lines run in a shell) are counted apart. A cost is null when it
is unknown, never 0; `cost_source` says whose figure it is ("agent": the agent showed it,
"estimate": muxd priced its tokens). Each result may be cut by the guards (Truncatable).
"""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

from muxd.mcp_server.schemas import Truncatable


class ExecutionErrorOutput(TypedDict):
    type: str         # "api_error", "rate_limited", "exit_status", "timeout", "interrupted", …
    message: str      # one line, the agent's (or program's) own words
    stack_hash: str   # equal for the same failure


class ExecutionRowOutput(TypedDict):
    """A row of list_recent_executions (seed 000 R1.2)."""

    id: str
    agent_name: str
    status: str                 # exact: pending, running, success, failed, cancelled, timeout, interrupted
    triggered_by: str           # manual, schedule, agent (an agent's own token), mcp, cli, web
    message: str | None
    started_at: str | None
    completed_at: str | None
    duration_seconds: float | None
    cost_usd: float | None      # null: unknown
    cost_source: str | None     # "agent" | "estimate" | null
    has_error: bool
    pane_id: str
    agent_type: str | None
    kind: str                   # "prompt" (an agent's turn) or "command"
    task_id: str | None
    trace_id: str | None
    principal: str | None       # who triggered it: "system", "token:NAME", "agent:%N"; null: typed by a person
    host: str | None            # the daemon's host that ran it (MUXD_HOST): where it came from


class ActiveExecutionRowOutput(ExecutionRowOutput):
    running_seconds: float | None
    queued_at: str | None
    host: NotRequired[str]    # sent from here to another host's pane (pane_id is %N@host), running there


class ExecutionDetailOutput(TypedDict):
    """get_execution_result's `execution` (seed 000 R2.2) and muxd's further fields."""

    id: str
    agent_name: str
    status: str
    message: str | None
    response: str | None
    error: ExecutionErrorOutput | None
    started_at: str | None
    completed_at: str | None
    duration_seconds: float | None
    cost_usd: float | None
    cost_source: str | None
    cost_model: str | None       # estimates: the model priced
    cost_price_date: str | None  # estimates: ISO date of the price table
    principal: str | None
    host: str | None             # the daemon's host that ran it (MUXD_HOST)
    context_used: int | None
    context_max: int | None
    tool_calls: list[str]
    pane_id: str
    agent_type: str | None
    kind: str
    triggered_by: str
    queued_at: str | None
    tokens_used: int | None
    files_written: list[str]
    exit_code: int | None
    session_id: str | None
    task_id: str | None
    trace_id: str | None
    span_id: str | None
    attempt: int | None
    idempotency_key: str | None
    sources: dict[str, str]      # field -> where its value came from
    transcript_bytes: int
    transcript_truncated: bool
    transcript: NotRequired[str]  # only with include_transcript


class _SendTask(TypedDict):
    execution_id: str
    status: str
    agent_name: str
    pane_id: str
    created: bool                            # false: the idempotency key named an earlier execution
    execution: NotRequired[ExecutionDetailOutput]  # only with wait=true


class SendTaskOutput(_SendTask, Truncatable):
    """The execution started (or queued); with wait=true, its result."""


class CancelExecutionOutput(TypedDict):
    execution_id: str
    status: str
    cancelled: bool
    agent_name: str


class _ListActive(TypedDict):
    executions: list[ActiveExecutionRowOutput]
    count: int


class ListActiveExecutionsOutput(_ListActive, Truncatable):
    """What runs or waits now."""


class RecentFiltersOutput(TypedDict):
    hours: float
    status: str | None
    agent_name: str | None
    triggered_by: str | None
    host: str | None


class _ListRecent(TypedDict):
    executions: list[ExecutionRowOutput]
    total_count: int
    filters_applied: RecentFiltersOutput


class ListRecentExecutionsOutput(_ListRecent, Truncatable):
    """Newest first; total_count over every match."""


class _ExecutionResult(TypedDict):
    execution: ExecutionDetailOutput


class ExecutionResultOutput(_ExecutionResult, Truncatable):
    """One execution in full."""


class FailureOutput(TypedDict):
    id: str
    agent_name: str
    message: str | None
    error: str
    failed_at: str | None
    status: str       # failed, timeout or interrupted
    kind: str


class CountsOutput(TypedDict):
    total_executions: int
    successful: int
    failed: int       # failed + timeout + interrupted
    cancelled: int
    running: int
    pending: int
    success_rate: float | None  # percent of all executions, one decimal


class CommandsOutput(CountsOutput):
    """Commands (muxd run windows, lines run in a shell), counted apart from agents."""

    panes: int        # panes that ran them


class AgentSummaryCountsOutput(CountsOutput):
    total_cost_usd: float | None  # null: no execution's cost is known
    cost_known_executions: int    # how many executions that sum covers
    total_tokens: int
    avg_duration_seconds: float | None
    last_execution_at: str | None
    last_execution_status: str | None


class OneAgentSummaryOutput(AgentSummaryCountsOutput):
    is_busy: bool
    queue_length: int
    state: str        # the pane's activity now; "gone": no such pane any more
    pane_id: str | None
    agent_type: str | None
    is_agent: bool
    host: NotRequired[str]    # another host's agent (a database daemons share): pane_id is %N@host
    stale: NotRequired[bool]  # that host sends no heartbeat: state Unknown


class FleetSummaryOutput(CountsOutput):
    total_agents: int           # agent panes (live, or gone with prompts in the window); no command windows
    agents_with_activity: int
    total_cost_usd: float | None
    cost_known_executions: int
    queue_length: int


class AgentRowOutput(TypedDict):
    agent_name: str
    agent_type: str | None
    executions: int
    success_rate: float | None
    cost_usd: float | None
    cost_known_executions: int
    status: str                 # running, idle, gone; unknown: another host's, that host stale
    is_busy: bool
    queue_length: int
    avg_duration_seconds: float | None
    last_execution_at: str | None
    last_execution_status: str | None
    host: NotRequired[str]    # another host's agent (a database daemons share)
    stale: NotRequired[bool]  # that host sends no heartbeat


class _ActivitySummary(TypedDict):
    agent_name: NotRequired[str]                 # one agent asked for
    summary: NotRequired[OneAgentSummaryOutput]  # one agent: its prompts
    fleet_summary: NotRequired[FleetSummaryOutput]  # the fleet: agents' prompts
    by_agent: NotRequired[list[AgentRowOutput]]
    commands: CommandsOutput
    recent_failures: list[FailureOutput]


class AgentActivitySummaryOutput(_ActivitySummary, Truncatable):
    """One agent (agent_name, summary) or the fleet (fleet_summary, by_agent); commands apart."""


class RetrievalOutput(TypedDict):
    memory_count: int
    source: list[str]


class TaskIoOutput(TypedDict):
    files_written: list[str]


class TaskRowOutput(TypedDict):
    """A row of seed 003's task tools."""

    id: str
    task_id: str | None
    task_slug: str | None
    task_name: str | None
    status: str
    started_at: str | None
    ended_at: str | None
    duration_ms: int | None
    trace_id: str | None
    span_id: str | None
    attempt: int | None
    error: ExecutionErrorOutput | None
    retrieval: RetrievalOutput
    io: TaskIoOutput
    backfilled: bool
    agent_name: str
    pane_id: str
    principal: str | None
    host: str | None


class _TasksList(TypedDict):
    executions: list[TaskRowOutput]
    total: int
    has_more: bool


class TasksListOutput(_TasksList, Truncatable):
    """One page, newest first; total over every match."""


class _TasksByTrace(TypedDict):
    executions: list[TaskRowOutput]
    retry_count: int
    final_status: str | None


class TasksByTraceOutput(_TasksByTrace, Truncatable):
    """Every attempt of one trace, by attempt."""


class ErrorPatternOutput(TypedDict):
    stack_hash: str
    count: int
    first_seen: str | None
    last_seen: str | None
    example_task_id: str | None
    example_trace_id: str | None
    error_type: str
    message: str
    example_execution_id: str


class _TasksLastFailed(TypedDict):
    failures: list[TaskRowOutput]
    error_patterns: list[ErrorPatternOutput]


class TasksLastFailedOutput(_TasksLastFailed, Truncatable):
    """The newest failures (failed, timeout, interrupted) and the patterns they share."""
