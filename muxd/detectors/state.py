"""`AgentState`: what muxd knows about the agent in a pane. Frozen records, one definition
behind the protocol, `muxd ls`, `muxd summary` and the MCP tools."""

from __future__ import annotations

from typing import Literal

import msgspec

# "claude", "codex", "gemini", "aider", "opencode", "shell" — or a plug-in detector's own name.
AgentType = str
KNOWN_AGENT_TYPES = ("claude", "codex", "gemini", "aider", "opencode", "shell")
ActivityState = Literal["Idle", "Thinking", "Generating", "ToolUse", "AwaitingConfirmation",
                        "AwaitingInput", "Exited", "Unknown"]
BUSY_STATES: frozenset[str] = frozenset({"Thinking", "Generating", "ToolUse"})
# The agent is at its prompt, ready for input (a turn has ended; text in its box is a person's).
AT_PROMPT_STATES: frozenset[str] = frozenset({"Idle", "AwaitingInput"})
RECENT_TOOLS_MAX = 10


class Activity(msgspec.Struct, frozen=True, kw_only=True):
    state: ActivityState = "Unknown"
    description: str | None = None  # spinner text: "Gusting", "Waiting for openai/x", …
    elapsed_s: int | None = None    # as the agent shows it on its status line
    since: float | None = None      # wall-clock time the published state began


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
    type: str      # "overloaded", "rate_limited", "api_error", "server_error", …
    message: str   # the agent's own words, one line


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    detector: str
    rule: str
    line: str | None = None  # the screen line that decided, stripped


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
    # The text in the agent's input box (lines joined by "\n"); None when the box is empty
    # (a placeholder is not input) or not on screen. The runner keeps it out of AgentState.
    input_text: str | None = None
    evidence: Evidence | None = None
    # Work the agent reports still running apart from its turn (Claude Code's background
    # subagents, Codex's background terminals): a count; 0 when none is shown.
    background: int = 0


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
    # The text in the agent's input box (lines joined by "\n"); None when the box is empty
    # (a placeholder is not input) or not on screen. The runner keeps it out of AgentState.
    input_text: str | None = None
    # Background work still running (subagents, terminals), as the screen counts it.
    background: int = 0
