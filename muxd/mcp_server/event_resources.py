"""The daemon's events as MCP resources: `muxd://events` (the bus's recent events) and
`muxd://panes/{pane}/attention` (what one pane's agent needs of you, and its recent agent events).

Reading one passes the guards a tool call passes (tier, rate limit, timeout, size cap, audit),
and the daemon answers as the caller's principal: a pane-scoped token reads its own panes'
events only. event_streams.py tells subscribers when to read them again.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

import msgspec
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from muxd.mcp_server.guards import ToolGuard
from muxd.mcp_server.limits import EVENTS_READ_MAX, PANE_EVENTS_READ_MAX
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.protocol.event_messages import AGENT_EVENT_KINDS, DaemonEvent, ListEvents
from muxd.protocol.messages import ShowPane

EVENTS_URI = "muxd://events"
PANE_ATTENTION_TEMPLATE = "muxd://panes/{pane}/attention"
_PANE_ATTENTION = re.compile(r"muxd://panes/([^/]+)/attention")
JSON = "application/json"


def pane_attention_uri(pane_id: str) -> str:
    """The attention resource of pane `%N`: muxd://panes/N/attention."""
    return PANE_ATTENTION_TEMPLATE.format(pane=pane_id.removeprefix("%"))


def pane_of_uri(uri: str) -> str | None:
    """The pane a `muxd://panes/{pane}/attention` URI names (`%N` or a name); None for another URI."""
    found = _PANE_ATTENTION.fullmatch(uri)
    return pane_target(unquote(found.group(1))) if found else None


def pane_target(ref: str) -> str:
    """A pane as a URI names it, as the daemon takes it: `3` is `%3`, anything else a name (or `%3`)."""
    return f"%{ref}" if ref.isdigit() else ref


def event_record(event: DaemonEvent) -> dict[str, Any]:
    """An event as MCP shows it: its fields that apply (None ones left out)."""
    return {k: v for k, v in msgspec.to_builtins(event).items() if v is not None and k != "type"}


async def read_events() -> dict[str, Any]:
    events = (await current_client().call(ListEvents, limit=EVENTS_READ_MAX)).events
    return {"events": [event_record(e) for e in events], "at": time.time()}


async def read_pane_attention(ref: str) -> dict[str, Any]:
    client = current_client()
    pane = (await client.call(ShowPane, target=pane_target(ref))).pane
    events = (await client.call(ListEvents, panes=[pane.id], kinds=list(AGENT_EVENT_KINDS),
                                limit=PANE_EVENTS_READ_MAX)).events
    return {"pane_id": pane.id, "attention": pane.attention, "since": pane.attention_since,
            "text": pane.attention_text, "agent_type": pane.agent.agent_type,
            "state": pane.agent.activity.state, "events": [event_record(e) for e in events], "at": time.time()}


async def guarded(guard: ToolGuard, name: str, args: dict[str, Any], read: Callable[[], Awaitable[Any]]) -> Any:
    """`read()` under the guards of a read-only tool named `name` called with `args`; a muxd error
    leaves as an MCP error whose message starts with its code ("forbidden: …")."""
    try:
        return await guard.run(name, read, risk="safe", read_only=True, args=args)
    except ToolError as exc:
        raise MCPError(code=INVALID_PARAMS, message=str(exc), data=args) from None


def register_event_resources(tools: ToolRegistry) -> None:
    server, guard = tools.server, tools.guard

    @server.resource(EVENTS_URI, name="events", title="muxd events", mime_type=JSON,
                     description="The daemon's recent events you may see (agent-waiting, agent-idle, "
                                 "agent-failed, execution-finished, ...), oldest first. Subscribe to hear "
                                 "when there is a new one.")
    async def events() -> str:
        result = await guarded(guard, "read_events", {"uri": EVENTS_URI}, read_events)
        return json.dumps(result, separators=(",", ":"))

    @server.resource(PANE_ATTENTION_TEMPLATE, name="pane_attention", title="what a pane needs of you",
                     mime_type=JSON,
                     description="What the pane's agent needs of you now (waiting, limited, failed, finished, "
                                 "or null), since when, its question or error, and its recent agent events. "
                                 "{pane} is the pane's number (3 for %3) or its name. Subscribe to hear when "
                                 "it changes.")
    async def pane_attention(pane: str) -> str:
        uri = PANE_ATTENTION_TEMPLATE.format(pane=pane)
        result = await guarded(guard, "read_pane_attention", {"uri": uri}, lambda: read_pane_attention(pane))
        return json.dumps(result, separators=(",", ":"))
