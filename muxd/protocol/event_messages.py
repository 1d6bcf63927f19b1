"""The daemon's events: one `DaemonEvent` per thing that happened (an agent began waiting for
you, a turn ended, an execution finished, a bell rang in a window, a session was made), on the
daemon's bus and to every connection that subscribed with `events=True`.

The kinds are tmux's hook names where tmux has the event, and muxd's `agent-*` ones for what
only muxd knows; `set-hook`, `muxd watch`, `muxd top` and MCP all name them the same way.
"""

from __future__ import annotations

from collections.abc import Collection

import msgspec

from muxd.errors import BadRequest
from muxd.protocol.fields import EventKinds, PaneTargets
from muxd.protocol.pane_messages import _Message

# muxd's own: what an agent did, read from its screen and hooks (muxd/daemon/attention/).
AGENT_EVENT_KINDS: dict[str, str] = {
    "agent-state": "an agent's state changed (every change)",
    "agent-waiting": "an agent began waiting for you: a confirmation or a question",
    "agent-idle": "an agent finished its turn and is back at its prompt",
    "agent-failed": "an agent's turn ended failed (an error, a timeout)",
    "agent-limited": "an agent hit a usage limit",
    "execution-finished": "an execution (a prompt's turn or a command) ended, whatever its status",
}
# tmux's hook names that muxd has the event for.
TMUX_EVENT_KINDS: dict[str, str] = {
    "alert-activity": "output in a window watched with monitor-activity",
    "alert-bell": "a bell in a window watched with monitor-bell",
    "alert-silence": "no output for monitor-silence seconds in a window",
    "client-attached": "a client attached",
    "client-detached": "a client detached",
    "pane-died": "a pane's program exited and the pane stays (remain-on-exit)",
    "pane-exited": "a pane's program exited and the pane closed",
    "session-created": "a session was made",
    "session-closed": "a session was closed",
    "session-renamed": "a session was renamed",
    "window-linked": "a window was made",
    "window-unlinked": "a window was closed",
    "window-renamed": "a window was renamed",
}
# The MCP tool engine's (seed 004): what the daemon learns from every MCP server of its.
TOOL_EVENT_KINDS: dict[str, str] = {
    "tool-registered": "an MCP server registered a tool this daemon did not know (name, category, risk)",
    "tool-called": "an MCP tool call ended: tool, principal, status, error code, latency (never its arguments)",
}
# The task queue's (seed 001): its pulse, for a live board (the web view's). A task's own history
# is get-task's events; these are heard only by a token that may read the queue (tasks:read).
TASK_EVENT_KINDS: dict[str, str] = {
    "task-changed": "a task was created or moved (claimed, worked, completed, reviewed, released, its lease ran out)",
}
# A fleet's pulse (issue 30): another daemon of a shared PostgreSQL database changed what it
# publishes (daemon/work/fleet_news.py), for a live board of the other hosts' panes (the web view's).
FLEET_EVENT_KINDS: dict[str, str] = {
    "fleet-changed": "another host of a shared database published its panes anew, went stale, came back or left",
}
EVENT_KINDS: dict[str, str] = {**AGENT_EVENT_KINDS, **TMUX_EVENT_KINDS, **TOOL_EVENT_KINDS, **TASK_EVENT_KINDS,
                               **FLEET_EVENT_KINDS}
# Heard only by who names them: one comes with every MCP call, and would crowd out what happened
# to the agents for a reader of "every kind" (or call it back for ever: reading muxd://events is a call);
# a busy queue's moves, or a busy fleet's, would likewise wake every reader of the agents (muxd top, muxd watch).
OPT_IN_EVENT_KINDS: frozenset[str] = frozenset({"tool-called", *TASK_EVENT_KINDS, *FLEET_EVENT_KINDS})
# A live board's pulse, not what happened to anyone: the recent events (daemon/attention/recent.py) keep none.
PULSE_EVENT_KINDS: frozenset[str] = frozenset({*TASK_EVENT_KINDS, *FLEET_EVENT_KINDS})


def wanted(kind: str, kinds: Collection[str] | None) -> bool:
    """Whether a reader that asked for `kinds` (None: every kind but the opt-in ones) hears an event of `kind`."""
    return kind not in OPT_IN_EVENT_KINDS if kinds is None else kind in kinds


class DaemonEvent(_Message, tag="daemon-event"):
    """One event. Fields that do not apply to its kind are None."""

    kind: str                        # one of EVENT_KINDS
    at: float                        # wall-clock time it happened
    pane_id: str | None = None
    window_id: str | None = None     # "@N"
    window_index: int | None = None
    window_name: str | None = None
    session: str | None = None       # the session's name
    session_id: str | None = None    # "$N"
    agent_type: str | None = None
    state: str | None = None         # the agent's state after the change
    previous: str | None = None      # and before it
    source: str | None = None        # where the state came from: screen, hook, session_log
    question: str | None = None      # agent-waiting: what it asks
    error: str | None = None         # agent-failed: the error's message (execution-finished: its error type;
                                     # tool-called: the error code)
    resets_at: float | None = None   # agent-limited: when the agent says its limit resets
    execution_id: str | None = None  # execution-finished, agent-failed, agent-idle: the execution
    status: str | None = None        # execution-finished: success, failed, …; tool-called: ok, error, denied, …
    exit_code: int | None = None     # pane-exited, pane-died
    client: str | None = None        # client-attached, client-detached: the client's name
    tool: str | None = None          # tool-registered, tool-called: the MCP tool
    category: str | None = None      # tool-registered: its category
    risk: str | None = None          # tool-registered: safe, moderate, dangerous
    principal: str | None = None     # tool-registered, tool-called: who registered or called it
    latency_ms: float | None = None  # tool-called: how long the call took
    task_id: str | None = None       # task-changed: the task (None: several, e.g. leases ran out); state: its state
    host: str | None = None          # fleet-changed: the other host (None: any, what was told meanwhile is lost)


def unknown_kinds(kinds: list[str]) -> list[str]:
    """The unknown names among `kinds` (empty when all are known)."""
    return [k for k in kinds if k not in EVENT_KINDS]


def unknown_kinds_message(unknown: list[str]) -> str:
    """The one line that refuses `unknown` kinds, naming the known ones."""
    return f"unknown event kind(s): {', '.join(unknown)}; known: {', '.join(EVENT_KINDS)}"


def check_kinds(kinds: list[str] | None) -> None:
    """Return when every one of `kinds` is known; else a bad_request naming the unknown and the known."""
    unknown = unknown_kinds(kinds or [])
    if unknown:
        raise BadRequest(unknown_kinds_message(unknown), field="kinds")


# The bus's recent events (daemon/attention/recent.py), for a reader that was not listening.
EVENTS_LIMIT_DEFAULT = 50
EVENTS_LIMIT_MAX = 500


class ListEvents(_Message, tag="list-events"):
    """The newest events this connection may see (oldest first), filtered as Subscribe's are."""

    id: int
    kinds: EventKinds | None = None   # None: every kind
    panes: PaneTargets | None = None  # pane ids; None: every pane (and, unscoped, the pane-less events)
    after: float | None = None        # only what happened after this wall-clock time
    limit: int = EVENTS_LIMIT_DEFAULT


class EventList(_Message, tag="event-list"):
    id: int
    events: list[DaemonEvent]
