"""What an agent's state change or an execution's end means as events: `agent-state` for every
change of state, `agent-waiting` as it begins to wait for a person, `agent-idle` as a turn ends,
`agent-limited` on a usage limit, and `execution-finished` (with `agent-failed` for an agent's
failed turn) when an execution ends."""

from __future__ import annotations

from typing import Any

from muxd.detectors.state import BUSY_STATES, AgentState
from muxd.executions.record import FAILED_STATUSES
from muxd.protocol.event_messages import DaemonEvent

WAITING_STATES = frozenset({"AwaitingConfirmation", "AwaitingInput"})
LIMITED_STATE = "UsageLimited"
# The failures that call a person: the history's failure family (record.FAILED_STATUSES) but
# `interrupted`, which the daemon's own stop or the person's next command in the shell caused.
ALERTED_FAILURES = frozenset(FAILED_STATUSES) - {"interrupted"}
QUESTION_MAX_CHARS = 500


def placement(pane: Any) -> dict[str, Any]:
    """The event fields that say where `pane` is: its window and session (none once it left them)."""
    fields: dict[str, Any] = {"pane_id": pane.id}
    window = pane.window
    session = getattr(window, "session", None)
    if window is not None and session is not None:
        fields.update(window_id=window.id, window_index=window.index, window_name=window.name,
                      session=session.name, session_id=session.id)
    return fields


def question_of(state: AgentState) -> str | None:
    """What a waiting agent asks, in one line: its dialog's question, else the tool it wants."""
    text = None
    if state.confirmation is not None and state.confirmation.prompt:
        text = state.confirmation.prompt
    elif state.tool:
        text = f"{state.tool}: {state.tool_input}" if state.tool_input else state.tool
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= QUESTION_MAX_CHARS else text[:QUESTION_MAX_CHARS - 1] + "…"


def state_events(pane: Any, before: AgentState, after: AgentState, now: float) -> list[DaemonEvent]:
    """The events of `pane`'s agent state going from `before` to `after` (none if only the
    spinner's words or counts changed)."""
    old, new = before.activity.state, after.activity.state
    if old == new or not after.is_agent:
        return []
    source = after.sources.get("state")
    common = dict(placement(pane), at=now, agent_type=after.agent_type, state=new, previous=old,
                  source=source.source if source is not None else None)
    events = [DaemonEvent(kind="agent-state", **common)]
    if new in WAITING_STATES and old not in WAITING_STATES:
        events.append(DaemonEvent(kind="agent-waiting", question=question_of(after), **common))
    elif new == "Idle" and (old in BUSY_STATES or old in WAITING_STATES):
        events.append(DaemonEvent(kind="agent-idle", **common))
    elif new == LIMITED_STATE:
        limit = after.limit
        events.append(DaemonEvent(kind="agent-limited", resets_at=limit.resets_at if limit else None,
                                  error=limit.message if limit else None, **common))
    return events


def execution_events(execution: Any, pane: Any | None, now: float) -> list[DaemonEvent]:
    """`execution-finished` for an ended execution, and `agent-failed` if an agent's turn failed.
    `pane` is None once the pane is gone (the event then names only its id)."""
    where = placement(pane) if pane is not None else {"pane_id": execution.pane_id}
    error = execution.error
    common = dict(where, at=now, agent_type=execution.agent_type, execution_id=execution.id,
                  status=execution.status)
    events = [DaemonEvent(kind="execution-finished", error=error.type if error else None, **common)]
    agent = execution.agent_type not in (None, "shell")
    if agent and execution.status in ALERTED_FAILURES:
        message = error.message if error is not None else execution.status
        events.append(DaemonEvent(kind="agent-failed", error=message, **common))
    return events
