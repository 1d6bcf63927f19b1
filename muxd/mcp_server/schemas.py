"""The output shapes of muxd's summary and pane tools, as TypedDicts: the SDK publishes them as
`outputSchema` (made lean by tool_publication.py), and validates each result against them.

`AgentSummaryOutput` is seed 002's summary: its own fields always (null or [] when unknown),
and muxd's further ones only when they have something to say (the confirmation asked, the
error shown, the usage limit that stopped the agent, the tool in use, background work, where
each field came from). `Truncatable` holds the fields the guards add to a result they cut;
the registry lets every shape carry them, without repeating them in each published schema.
"""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict


class Truncatable(TypedDict):
    truncated: NotRequired[bool]
    original_count: NotRequired[int]
    original_counts: NotRequired[dict[str, int]]
    original_chars: NotRequired[dict[str, int]]


class SummaryActivityOutput(TypedDict):
    state: str
    description: str | None
    duration_secs: int | None
    tool: NotRequired[str]        # the tool in use (or asked for)
    tool_input: NotRequired[str]  # its input, one short line


class SummarySourceOutput(TypedDict):
    source: str          # "screen", "hook", "session_log"
    observed_at: float   # seconds since the epoch the value was first seen
    detail: str | None   # the hook event ("Stop") or the screen rule that gave it


class SummarySessionOutput(TypedDict):
    id: str | None
    model: str | None
    tokens_used: int | None


class SummaryContextOutput(TypedDict):
    is_awaiting_input: bool
    is_awaiting_confirmation: bool
    tags: list[str]
    cwd: str | None


class SummaryConfirmationOutput(TypedDict):
    prompt: str
    options: list[str]
    tool: str | None  # the tool (or command) the agent asks to use, where it names one


class SummaryErrorOutput(TypedDict):
    type: str     # "overloaded", "rate_limited", "api_error", "server_error", …
    message: str  # the agent's own words, one line


class SummaryLimitOutput(TypedDict):
    message: str              # the agent's own words, one line
    resets_at: float | None   # epoch seconds the agent says the limit resets; null: it does not say


class AgentSummaryOutput(TypedDict):
    """Seed 002: what the agent in a pane is doing."""

    pane_id: str
    agent_type: str | None
    is_agent: bool
    activity: SummaryActivityOutput
    session: SummarySessionOutput
    recent_tools: list[str]
    context: SummaryContextOutput
    recent_output: NotRequired[list[str]]  # only when include_recent_output is true
    confidence: NotRequired[str]  # "certain" (hook and screen agree), "hook", "stale"; absent: "screen"
    # Only when there is one: a confirmation asked (or a limit's dialog), an error shown, the
    # usage limit that stopped it (state UsageLimited), subagents and background tasks still
    # running apart from the turn, and where each field came from and when.
    confirmation: NotRequired[SummaryConfirmationOutput]
    error: NotRequired[SummaryErrorOutput]
    limit: NotRequired[SummaryLimitOutput]
    background: NotRequired[int]
    sources: NotRequired[dict[str, SummarySourceOutput]]  # field ("state", "tool", …) -> where from, when
    # Another host's pane (pane_id `%N@host`, a database daemons share): as its daemon last
    # published it, when (its clock) and the state's source; on a stale host the state is
    # Unknown, the last one published in last_state, with the host's last heartbeat.
    host: NotRequired[str]
    stale: NotRequired[bool]
    observed_at: NotRequired[float]
    state_source: NotRequired[str | None]
    last_state: NotRequired[str]
    last_heartbeat_at: NotRequired[float]


class FleetHostOutput(TypedDict):
    """Another daemon of the shared database, judged by its heartbeat (the database's clock)."""

    host: str
    stale: bool
    last_heartbeat_at: float  # epoch seconds
    panes: int


class ListAgentsOutput(TypedDict):
    """One line per pane; another host's as `%N@host`."""

    agents: list[str]
    hosts: NotRequired[list[FleetHostOutput]]  # only on a database other daemons share
    hosts_unreadable: NotRequired[str]  # store_unavailable: …, when the other hosts could not be read


class PaneOutput(TypedDict):
    """A pane as the MCP tools show it (the CLI's `list-panes --json` tells more)."""

    id: str
    session: str
    name: str | None
    tags: list[str]
    command: list[str]
    cwd: str | None
    pid: int | None
    foreground: str | None   # the program in the foreground
    width: int
    height: int
    status: str              # "running", "exited"
    exit_code: int | None
    created_at: float
    source: str              # "muxd", or the tmux pane it was adopted from
    agent_type: str | None
    state: str               # the agent state
    attention: str | None    # what its agent needs of a person: waiting, limited, failed, finished
    attention_since: float | None
    attention_text: str | None
    emulator_failed: NotRequired[bool]  # only when true: the screen is no longer drawn
    execution_id: NotRequired[str]      # create_pane of a command: the execution recording it


class ListPanesOutput(TypedDict):
    panes: list[PaneOutput]


class ReadPaneOutput(TypedDict):
    """The last lines of a pane and a cursor for the next read."""

    pane_id: str
    lines: int
    text: str
    cursor: str
    redrawn: NotRequired[bool]
    skipped: NotRequired[int]
    repeated_last_line: NotRequired[bool]


class SendInputOutput(TypedDict):
    pane_id: str
    sent_chars: int
    keys: int
    submitted: bool


class ResizePaneOutput(TypedDict):
    pane_id: str
    columns: int
    lines: int


class KillPaneOutput(TypedDict):
    pane_id: str
    killed: bool
