"""The words of an attached client's status line: window tabs and the active pane's agent state."""

from __future__ import annotations

import time

from muxd.detectors.state import BUSY_STATES, AgentState

_HIDDEN_AGENT_TYPES = (None, "shell")


def tokens_text(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M tok"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k tok"
    return f"{tokens} tok"


def agent_status(state: AgentState, now: float | None = None) -> str:
    """`claude · Thinking 12s · 4.8k tok`; empty for a plain shell or no agent."""
    if not state.is_agent or state.agent_type in _HIDDEN_AGENT_TYPES:
        return ""
    parts = [str(state.agent_type)]
    activity = state.activity
    if activity.state != "Unknown":
        text = activity.state
        elapsed = activity.elapsed_s
        if elapsed is None and activity.since is not None and activity.state in BUSY_STATES:
            elapsed = max(0, int((now if now is not None else time.time()) - activity.since))
        if elapsed is not None and activity.state in BUSY_STATES:
            text += f" {elapsed}s"
        parts.append(text)
    if state.session.tokens_used:
        parts.append(tokens_text(state.session.tokens_used))
    return " · ".join(parts)


_PHRASES = {"Idle": "idle", "Thinking": "thinking", "Generating": "writing", "ToolUse": "using a tool",
            "AwaitingConfirmation": "waiting for yes", "AwaitingInput": "waiting for input",
            "UsageLimited": "at its usage limit", "Exited": "exited"}


def agent_phrase(state: AgentState) -> str:
    """`claude: waiting for yes`, `codex: running Bash`; empty for a plain shell or no agent."""
    if not state.is_agent or state.agent_type in _HIDDEN_AGENT_TYPES:
        return ""
    activity = state.activity.state
    if activity == "ToolUse" and state.tool:
        return f"{state.agent_type}: running {state.tool}"
    phrase = _PHRASES.get(activity)
    return f"{state.agent_type}: {phrase}" if phrase else str(state.agent_type)
