"""The output shapes of muxd's MCP tools, as TypedDicts: the SDK publishes them as `outputSchema`.

`AgentSummaryOutput` is seed 002's summary field for field, with the confirmation asked, the
error shown and the usage limit that stopped the agent (null when none), the background work
still running, how far the state can be trusted (`confidence`) and where each field came from
(`sources`). The guards may cut a result that is too large; the fields they add then
(`truncated`, `original_count`, `original_chars`) are declared as optional on every shape, or
the SDK's validation would drop them.
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
    tool: str | None        # the tool in use (or asked for)
    tool_input: str | None  # its input, one short line


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


class _AgentSummary(TypedDict):

    pane_id: str
    agent_type: str | None
    is_agent: bool
    activity: SummaryActivityOutput
    session: SummarySessionOutput
    recent_tools: list[str]
    context: SummaryContextOutput
    confirmation: SummaryConfirmationOutput | None  # only while it asks (a confirmation, a limit's dialog)
    error: SummaryErrorOutput | None                # the error the agent shows, if any
    limit: SummaryLimitOutput | None                # the usage limit that stopped it (state UsageLimited)
    recent_output: NotRequired[list[str]]  # only when include_recent_output is true
    background: int         # subagents and background tasks still running apart from the turn
    confidence: str         # "certain" (hook and screen agree), "screen", "hook", "stale"
    sources: dict[str, SummarySourceOutput]  # field ("state", "tool", "session_id", …) -> where from, when


class AgentSummaryOutput(_AgentSummary, Truncatable):
    """Seed 002: what the agent in a pane is doing; unknown fields are null or []."""


class _ListAgents(TypedDict):
    agents: list[str]


class ListAgentsOutput(_ListAgents, Truncatable):
    """One line per pane."""


class _ReadPane(TypedDict):
    pane_id: str
    lines: int
    text: str
    cursor: str
    redrawn: NotRequired[bool]
    skipped: NotRequired[int]
    repeated_last_line: NotRequired[bool]


class ReadPaneOutput(_ReadPane, Truncatable):
    """The last lines of a pane and a cursor for the next read."""


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
