"""The execution history on the wire: prompts and commands as executions, their records,
the queries of the history (seeds 000, 003, 004). Part of the unions in messages.py."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from muxd.config import EXECUTION_IDS_MAX_COUNT, PROMPT_MAX_CHARS
from muxd.executions.record import Execution
from muxd.protocol.fields import Argv, FilePath, Label, ListOffset, Target
from muxd.store.execution_store import AgentStats, ErrorPattern, TimeBucket

Prompt = Annotated[str, msgspec.Meta(max_length=PROMPT_MAX_CHARS)]
ExecutionIds = Annotated[list[Label], msgspec.Meta(max_length=EXECUTION_IDS_MAX_COUNT)]


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


# ---------------------------------------------------------------- requests

class SubmitPrompt(_Message, tag="submit"):
    """A prompt for the agent of `target`, as an execution (delivered now, or queued)."""

    id: int
    target: Target
    message: Prompt
    triggered_by: Literal["mcp", "cli", "web", "agent", "schedule"] = "cli"
    task_id: Label | None = None
    trace_id: Label | None = None
    span_id: Label | None = None
    attempt: int | None = None
    idempotency_key: Label | None = None
    timeout_s: float | None = None      # the execution's own limit (default EXECUTION_TIMEOUT_DEFAULT_S)
    wait_s: float = 0.0                 # answer when it ended, or after this long, whichever is first
    force: bool = False                 # send it even where no agent runs (a shell would run it)


class RunCommand(_Message, tag="run"):
    """A command as an execution: typed into the shell of `target`, or in a new window."""

    id: int
    command: Argv
    target: Target | None = None        # a pane whose shell runs it; None: a new window
    cwd: FilePath | None = None
    wait_s: float = 0.0
    timeout_s: float | None = None
    trace_id: Label | None = None       # W3C trace context: the new window's TRACEPARENT names them
    span_id: Label | None = None
    keep: bool = False                  # the new window stays when the command ends (default: it closes)


class CancelExecution(_Message, tag="cancel-execution"):
    id: int
    execution_id: Label


class GetExecution(_Message, tag="get-execution"):
    id: int
    execution_id: Label
    include_transcript: bool = False


class ListExecutions(_Message, tag="list-executions"):
    id: int
    agent_name: Label | None = None
    status: Label | None = None
    active: bool = False                # pending and running only (list_active_executions)
    triggered_by: Label | None = None
    task_id: Label | None = None
    trace_id: Label | None = None
    since: float | None = None
    until: float | None = None
    limit: int = 20
    offset: ListOffset = 0
    host: Label | None = None           # what one daemon's host (MUXD_HOST) ran; None: every host's


class ExecutionFailures(_Message, tag="execution-failures"):
    id: int
    task_id: Label | None = None
    agent_name: Label | None = None
    since: float | None = None
    limit: int = 10
    unique_errors: bool = False
    host: Label | None = None


class ExecutionStats(_Message, tag="execution-stats"):
    id: int
    agent_name: Label | None = None
    since: float | None = None
    failures_limit: int = 5
    host: Label | None = None


class ExecutionTimeline(_Message, tag="execution-timeline"):
    """The history over time (the web view's charts): per agent and kind, the executions that began
    in each stretch of `bucket_s` seconds from `since` (to `until`, else now)."""

    id: int
    since: float
    bucket_s: int = 3600
    until: float | None = None
    agent_name: Label | None = None
    host: Label | None = None


class WaitExecutions(_Message, tag="wait-executions"):
    """Until every one (or any one) of the executions has ended, or `timeout_s`."""

    id: int
    execution_ids: ExecutionIds
    mode: Literal["all", "any"] = "all"
    timeout_s: float = 30.0


class ShortIds(_Message, tag="short-ids"):
    """The short id of each of `ids` (execution or task ids), as the CLI's tables show them."""

    id: int
    kind: Literal["execution", "task"]
    ids: ExecutionIds


# ---------------------------------------------------------------- replies

class ExecutionReply(_Message, tag="execution"):
    id: int
    execution: Execution
    transcript: str | None = None       # plain text, when asked for
    created: bool = True                # False: an execution with that idempotency key already existed


class ExecutionList(_Message, tag="execution-list"):
    id: int
    executions: list[Execution]
    total: int = 0
    timed_out: bool = False             # WaitExecutions: the time ran out first


class FailureReport(_Message, tag="failure-report"):
    id: int
    failures: list[Execution]
    patterns: list[ErrorPattern]


class LiveAgent(msgspec.Struct, frozen=True, kw_only=True):
    """An agent pane now: what the history cannot say."""

    agent_name: str
    pane_id: str
    agent_type: str | None
    is_agent: bool = False              # an agent CLI runs in front (not a shell, not a muxd run command)
    state: str                          # the AgentState activity
    is_busy: bool
    queue_length: int
    running_execution_id: str | None = None
    # Another host's pane (a database daemons share, issue 30), as its daemon last published it:
    # pane_id is `%N@host`, queue_length unknown (0); on a stale host the state is Unknown.
    host: str | None = None
    stale: bool = False


class StatsReply(_Message, tag="execution-stats-reply"):
    id: int
    agents: list[AgentStats]
    live: list[LiveAgent]
    recent_failures: list[Execution]


class TimelineReply(_Message, tag="execution-timeline-reply"):
    id: int
    since: float
    bucket_s: int
    buckets: list[TimeBucket]           # oldest first; a stretch with no execution has none


EXECUTION_REQUESTS = (SubmitPrompt, RunCommand, CancelExecution, GetExecution, ListExecutions,
                      ExecutionFailures, ExecutionStats, ExecutionTimeline, WaitExecutions)
EXECUTION_REPLIES = (ExecutionReply, ExecutionList, FailureReport, StatsReply, TimelineReply)


class ShortIdList(_Message, tag="short-id-list"):
    id: int
    short_ids: dict[str, str]           # each asked id: its shortest unique start (store/short_ids.py)
