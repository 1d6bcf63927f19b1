"""Provenance of an AgentState's fields: which fields there are, the screen's provenance for a
state it read, keeping a field's first observation while its value holds, and how far a
published state can be trusted now (`confidence_at`)."""

from __future__ import annotations

from collections.abc import Callable

from muxd.detectors.state import BUSY_STATES, AgentState, Confidence, Provenance

# A busy state that nothing (no hook, no change on screen: spinners tick every second) has
# confirmed for this long is "stale": the agent may have hung, or the pane stopped drawing.
STATE_STALE_S = 60.0

# The fields a provenance is kept for, by name, and how to read each off a state. "state" is
# the activity as a whole: a spinner's new words or seconds are a new observation of it.
FIELDS: dict[str, Callable[[AgentState], object]] = {
    "state": lambda s: (s.activity.state, s.activity.description, s.activity.elapsed_s),
    "tool": lambda s: s.tool,
    "tool_input": lambda s: s.tool_input,
    "recent_tools": lambda s: s.recent_tools or None,
    "session_id": lambda s: s.session.id,
    "model": lambda s: s.session.model,
    "tokens_used": lambda s: s.session.tokens_used,
    "cost_usd": lambda s: s.session.cost_usd,
    "context_left_pct": lambda s: s.session.context_left_pct,
    "confirmation": lambda s: s.confirmation,
    "error": lambda s: s.error,
    "limit": lambda s: s.limit,
    "prompt": lambda s: s.prompt,
    "background": lambda s: s.background or None,  # 0: none shown, nothing to trace
}


def screen_sources(state: AgentState, observed_at: float, rule: str,
                   field_rules: dict[str, str] | None = None) -> dict[str, Provenance]:
    """Provenance "screen" for every field `state` gives a value (the state always), its detail
    the rule that read the field (`field_rules`), else `rule`."""
    seen = Provenance(source="screen", observed_at=observed_at, detail=rule)
    sources = {name: seen for name, value_of in FIELDS.items() if name == "state" or value_of(state) is not None}
    for name, field_rule in (field_rules or {}).items():
        if name in sources and field_rule != rule:
            sources[name] = Provenance(source="screen", observed_at=observed_at, detail=field_rule)
    return sources


def carried(before: AgentState, after: AgentState) -> dict[str, Provenance]:
    """`after`'s sources, each kept from `before` where the field's value and source are the
    same: a field's observed_at says when its value was first seen, so a state that did not
    change compares equal to the one published."""
    sources = dict(after.sources)
    for name, new in after.sources.items():
        old = before.sources.get(name)
        value_of = FIELDS.get(name)
        if old is not None and old.source == new.source and value_of is not None and (
                value_of(before) == value_of(after)):
            sources[name] = old
    return sources


def confidence_at(state: AgentState, now: float) -> Confidence:
    """The state's confidence as of `now`: "stale" for a busy state whose newest evidence is
    older than STATE_STALE_S, else what the fusion said (a state at rest keeps: a quiet screen
    at a prompt is still a true reading)."""
    if state.activity.state in BUSY_STATES and state.sources:
        newest = max(p.observed_at for p in state.sources.values())
        if now - newest > STATE_STALE_S:
            return "stale"
    return state.confidence
