"""`AgentState`: what muxd knows about the agent in a pane. Frozen records, one definition
behind the protocol, `muxd ls`, `muxd summary` and the MCP tools."""

from __future__ import annotations

from typing import Literal

import msgspec

# "claude", "codex", "gemini", "aider", "opencode", "qwen", "pi", "cline", "kilo", "shell" — or a plug-in detector's own name.
AgentType = str
KNOWN_AGENT_TYPES = ("claude", "codex", "gemini", "aider", "opencode", "qwen", "pi", "cline", "kilo", "shell")
ActivityState = Literal["Idle", "Thinking", "Generating", "ToolUse", "AwaitingConfirmation",
                        "AwaitingInput", "UsageLimited", "Exited", "Unknown"]
BUSY_STATES: frozenset[str] = frozenset({"Thinking", "Generating", "ToolUse"})
# The agent is at its prompt, ready for input (a turn has ended; text in its box is a person's).
AT_PROMPT_STATES: frozenset[str] = frozenset({"Idle", "AwaitingInput"})
# The agent's turn is over: it is at its prompt, or a usage limit stopped it ("UsageLimited":
# neither busy nor at its prompt, since what it is given now fails the same way until the reset).
TURN_OVER_STATES: frozenset[str] = AT_PROMPT_STATES | {"UsageLimited"}
RECENT_TOOLS_MAX = 10
LIMIT_KINDS = frozenset({"usage_limit", "rate_limited"})  # error kinds (AgentError.type) of a usage limit
HOOK_LATE_S = 1.0  # a hook may reach muxd this long after the screen showed what it tells
# Where a fact about an agent came from: its screen, its own lifecycle hooks, its session log.
FactSource = Literal["screen", "hook", "session_log"]
# How far the published state can be trusted: a hook and the screen agree ("certain"), one of
# them alone says it ("screen", "hook"), or a busy state nothing has confirmed for a while
# ("stale"; see muxd/detectors/provenance.py).
Confidence = Literal["certain", "screen", "hook", "stale"]


class Activity(msgspec.Struct, frozen=True, kw_only=True):
    state: ActivityState = "Unknown"
    description: str | None = None  # spinner text: "Gusting", "Waiting for openai/x", …
    elapsed_s: int | None = None    # as the agent shows it on its status line
    since: float | None = None      # wall-clock time this agent entered the published state


class AgentSession(msgspec.Struct, frozen=True, kw_only=True):
    id: str | None = None
    model: str | None = None
    tokens_used: int | None = None
    cost_usd: float | None = None
    context_left_pct: float | None = None


class Confirmation(msgspec.Struct, frozen=True, kw_only=True):
    prompt: str
    options: list[str] = []


class AgentError(msgspec.Struct, frozen=True, kw_only=True):
    type: str      # "overloaded", "rate_limited", "usage_limit", "api_error", "server_error", …
    message: str   # the agent's own words, one line


class UsageLimit(msgspec.Struct, frozen=True, kw_only=True):
    """The usage (or rate) limit that stopped the agent, as it words it."""

    message: str              # the agent's own words, one line
    resets_at: float | None   # wall-clock epoch seconds the agent says it resets; None: it does not say


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    detector: str
    rule: str
    line: str | None = None  # the screen line that decided, stripped


class Provenance(msgspec.Struct, frozen=True, kw_only=True):
    """Where one AgentState field's value came from, and when that value was first observed."""

    source: FactSource
    observed_at: float        # wall-clock seconds
    detail: str | None = None  # the hook's own event name ("PreToolUse") or the detector's rule


class Fusion(msgspec.Struct, frozen=True, kw_only=True):
    """The screen's and the hooks' view of the activity, and the rule that chose between them
    (see muxd/detectors/fusion.py): what `muxd explain` shows when they disagree."""

    screen: ActivityState | None = None  # the state the screen shows
    screen_at: float | None = None       # since when it shows it
    hook: ActivityState | None = None    # the state the last hooks claim (None: no claim now)
    hook_event: str | None = None        # the hook that claimed it, in the agent's own words
    hook_at: float | None = None
    rule: str = "screen-only"


class AgentState(msgspec.Struct, frozen=True, kw_only=True):
    pane_id: str = ""
    agent_type: AgentType | None = None
    is_agent: bool = False
    activity: Activity = Activity()
    session: AgentSession = AgentSession()
    recent_tools: list[str] = []
    tool: str | None = None  # the tool in use or awaiting approval, if any
    is_awaiting_input: bool = False
    is_awaiting_confirmation: bool = False
    confirmation: Confirmation | None = None
    error: AgentError | None = None
    limit: UsageLimit | None = None  # set while (and only while) the state is UsageLimited
    # The text in the agent's input box (lines joined by "\n"); None when the box is empty
    # (a placeholder is not input) or not on screen. The runner keeps it out of AgentState.
    input_text: str | None = None
    evidence: Evidence | None = None
    # Work the agent reports still running apart from its turn (Claude Code's background
    # subagents, Codex's background terminals): a count; 0 when none is shown.
    background: int = 0
    tool_input: str | None = None  # the tool's input in one short line ("git status"): a hook's
    prompt: str | None = None      # the prompt of the current (or last) turn as the agent got it: a hook's
    # Field name ("state", "tool", "session_id", …) -> where its value came from and when.
    sources: dict[str, Provenance] = {}
    confidence: Confidence = "screen"
    fusion: Fusion | None = None  # None: no hook has spoken, the screen alone decides


class ToolSighting(msgspec.Struct, frozen=True):
    """A tool use visible on screen: `name` ("Bash") and the line that shows it, for counting
    each use once however many frames redraw it."""

    name: str
    signature: str


class Detection(msgspec.Struct, frozen=True, kw_only=True):
    """What one detector read off one screen; the runner turns it into a published AgentState."""

    agent_type: AgentType | None
    state: ActivityState
    rule: str
    line: str | None = None
    description: str | None = None
    elapsed_s: int | None = None
    tokens: int | None = None
    model: str | None = None
    session_id: str | None = None
    cost_usd: float | None = None
    context_left_pct: float | None = None
    tool: str | None = None
    tools_seen: list[ToolSighting] = []
    confirmation: Confirmation | None = None
    error: AgentError | None = None
    limit: UsageLimit | None = None  # with state UsageLimited: what the screen says of the limit
    # The text in the agent's input box (lines joined by "\n"); None when the box is empty
    # (a placeholder is not input) or not on screen. The runner keeps it out of AgentState.
    input_text: str | None = None
    # Background work still running (subagents, terminals), as the screen counts it.
    background: int = 0
    # Provenance field name ("model", "tool", …; provenance.FIELDS) -> the rule that read it,
    # where that is not `rule` (a manifest's [[fields]] pattern): what its `sources` detail says.
    field_rules: dict[str, str] = {}


def takes_prompt(state: str, confirmation: Confirmation | None) -> bool:
    """The agent's input box takes a prompt: it is at its prompt, or a usage limit stopped it
    there (not in a dialog about the limit, which a typed prompt would answer instead)."""
    return state in AT_PROMPT_STATES or (state == "UsageLimited" and confirmation is None)
