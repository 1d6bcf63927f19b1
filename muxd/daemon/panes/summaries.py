"""A pane's compact agent summary (seed 002), built from the state already kept: what the
`summary` command answers and what a daemon on a shared database publishes (fleet_presence.py)."""

from __future__ import annotations

import time

from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.session_ids import session_id
from muxd.detectors.provenance import confidence_at
from muxd.detectors.state import AgentState, Provenance
from muxd.protocol.pane_messages import (
    AgentSummary, SummaryActivity, SummaryConfirmation, SummaryContext, SummarySession,
)


def recent_output(pane: Pane, count: int) -> list[str]:
    """The last `count` lines of output, plain text, trailing blank rows dropped."""
    text = pane.emulator.capture(-(count + pane.lines))
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines[-count:]


def confirmation(state: AgentState) -> SummaryConfirmation | None:
    """The question an agent awaiting confirmation (or stopped by a usage limit, in a dialog
    about it) asks, with the tool it asks to use."""
    asked = state.confirmation
    if asked is None or not (state.is_awaiting_confirmation or state.activity.state == "UsageLimited"):
        return None  # (a dialog about a usage limit asks too: Claude Code's weekly one)
    return SummaryConfirmation(prompt=asked.prompt, options=list(asked.options), tool=state.tool)


# The AgentState sources a summary shows: the fields the summary carries.
SUMMARY_SOURCES = ("state", "tool", "tool_input", "session_id", "model", "tokens_used", "recent_tools",
                   "confirmation", "error", "limit", "background")


def summary_sources(state: AgentState, shown_session_id: str | None, now: float) -> dict[str, Provenance]:
    """Where each summary field came from: the state's own sources, and "session_log" for a
    session id a reader found in the agent's logs just now."""
    sources = {name: state.sources[name] for name in SUMMARY_SOURCES if name in state.sources}
    if shown_session_id is not None and state.session.id is None:
        sources["session_id"] = Provenance(source="session_log", observed_at=now)
    return sources


def agent_summary(pane: Pane, *, include_recent_output: bool = False, output_lines: int = 10,
                  now: float | None = None) -> AgentSummary:
    state = pane.agent
    since = state.activity.since
    now = time.time() if now is None else now
    shown_session_id = session_id(pane, state)
    return AgentSummary(
        pane_id=pane.id,
        agent_type=state.agent_type,
        is_agent=state.is_agent,
        activity=SummaryActivity(state=state.activity.state, description=state.activity.description,
                                 duration_secs=None if since is None else max(0, int(now - since)),
                                 tool=state.tool, tool_input=state.tool_input),
        session=SummarySession(id=shown_session_id, model=state.session.model,
                               tokens_used=state.session.tokens_used),
        recent_tools=list(state.recent_tools),
        context=SummaryContext(is_awaiting_input=state.is_awaiting_input,
                               is_awaiting_confirmation=state.is_awaiting_confirmation,
                               tags=list(pane.tags), cwd=pane.cwd()),
        confirmation=confirmation(state),
        error=state.error,
        limit=state.limit,
        recent_output=recent_output(pane, output_lines) if include_recent_output else None,
        background=state.background,
        confidence=confidence_at(state, now),
        sources=summary_sources(state, shown_session_id, now),
    )
