"""What `muxd mcp` says of itself at `initialize`, as plain data: no SDK import.

The stdio front (stdio_front.py) answers `initialize` from this while the SDK still imports, and
server.py gives the same name and instructions to the SDK's server; tests hold the two answers
equal (tests/test_mcp_startup.py), so the copy of the SDK's negotiation below cannot drift.
"""

from __future__ import annotations

from typing import Any

from muxd import __version__

SERVER_NAME = "muxd"
INSTRUCTIONS = (
    "muxd runs terminal panes (AI coding agents and shells). Check agents with agent_summary or "
    "list_agents (cheap); read_pane only when you need the raw screen (pass its cursor back to get "
    "only new lines); wait_for instead of polling (with attention and no pane_id: until any agent "
    "needs you). send_task gives an agent a prompt as a tracked execution; "
    "the history (list_recent_executions, get_execution_result, get_agent_activity_summary, tasks_*) says what ran, "
    "how it ended and what it cost. The resources muxd://events and muxd://panes/{pane}/attention can be "
    "read and subscribed to."
)
# The revisions the SDK negotiates through `initialize` (mcp_types.HANDSHAKE_PROTOCOL_VERSIONS), oldest
# first: a client's offer among them is taken, any other gets the newest.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What muxd serves: tools, and resources one can subscribe to (no prompts, logging nor completions).
CAPABILITIES: dict[str, Any] = {"resources": {"listChanged": False, "subscribe": True},
                                "tools": {"listChanged": False}}


def initialize_result(params: Any) -> dict[str, Any] | None:
    """The result of an `initialize` request with `params`, as the SDK would give it; None when the
    params are not a well-formed offer (the SDK then answers the error itself)."""
    if not isinstance(params, dict):
        return None
    version, info = params.get("protocolVersion"), params.get("clientInfo")
    if not isinstance(version, str) or not isinstance(params.get("capabilities"), dict) \
            or not isinstance(info, dict) or not isinstance(info.get("name"), str) \
            or not isinstance(info.get("version"), str):
        return None
    negotiated = version if version in HANDSHAKE_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1]
    return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS, "protocolVersion": negotiated,
            "serverInfo": {"name": SERVER_NAME, "version": __version__}}
