"""`wait_for`: a bounded, server-side wait for a pane's agent state, a regex on its screen, or its exit.

States and exits arrive as daemon events (Subscribe on a connection of the wait's own), so
they are not polled. The screen has no change events: a regex is re-checked on every event
and every WAIT_SCREEN_POLL_S, when the screen changed (screen_pattern.py bounds each check).
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, get_args

import msgspec
from pydantic import Field

from muxd.client.connection import Client
from muxd.detectors.state import ActivityState
from muxd.errors import BadRequest, NotFound
from muxd.mcp_server.link import current_client, token_of
from muxd.mcp_server.limits import (
    WAIT_CALL_MARGIN_S, WAIT_PATTERN_MAX_CHARS, WAIT_SCREEN_POLL_S, WAIT_STATES_MAX, WAIT_TIMEOUT_S_DEFAULT, WAIT_TIMEOUT_S_MAX,
    WAIT_TIMEOUT_S_MIN,
)
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.screen_pattern import SYNTAX, ScreenPattern
from muxd.mcp_server.summary_tools import READ_ONLY, PaneId
from muxd.protocol.messages import AgentStateChanged, CapturePane, ListPanes, PaneExited, Subscribe, Summary

STATES: tuple[str, ...] = get_args(ActivityState)
WAIT_SCREEN_LINES = 200  # how far back from the bottom a regex wait looks


def _socket_path(client: Client) -> str:
    path = client.socket_path
    if not path:
        raise NotFound("cannot tell the daemon's socket path for an event connection")
    return path


def _check_states(state: str | list[str] | None) -> set[str]:
    wanted = [state] if isinstance(state, str) else list(state or [])
    if len(wanted) > WAIT_STATES_MAX:
        raise BadRequest(f"state has {len(wanted)} entries, at most {WAIT_STATES_MAX} allowed", field="state")
    unknown = [s for s in wanted if s not in STATES]
    if unknown:
        raise BadRequest(f"state: unknown state(s) {', '.join(map(repr, unknown))}; known: {', '.join(STATES)}",
                         field="state")
    return set(wanted)


def _summary_dict(summary: Any) -> dict[str, Any]:
    record: dict[str, Any] = msgspec.to_builtins(summary)
    record.pop("recent_output", None)
    return record


def register_wait_tools(tools: ToolRegistry) -> None:
    async def _exit_code(client: Client, target: str) -> int | None:
        # An exit seen as a state change carries no code; the pane (until removed) has it.
        panes = (await client.call(ListPanes, all=True)).panes
        return next((p.exit_code for p in panes if p.id == target), None)

    @tools.tool(category="panes", risk="safe", annotations=READ_ONLY)
    async def wait_for(
        pane_id: PaneId,
        state: Annotated[str | list[str] | None, Field(
            description=f"return when the agent state is this (or any of these): {', '.join(STATES)}")] = None,
        pattern: Annotated[str | None, Field(
            description=f"return when a screen line matches this regex ({SYNTAX})",
            max_length=WAIT_PATTERN_MAX_CHARS)] = None,
        exited: Annotated[bool, Field(description="return when the pane's program exits")] = False,
        timeout_s: Annotated[float | None, Field(
            description=f"give up after this many seconds ({WAIT_TIMEOUT_S_MIN}-{WAIT_TIMEOUT_S_MAX}; default "
                        f"{WAIT_TIMEOUT_S_DEFAULT:g}, kept within the server's per-call timeout)",
            json_schema_extra={"minimum": WAIT_TIMEOUT_S_MIN, "maximum": WAIT_TIMEOUT_S_MAX})
        ] = None,
    ) -> dict[str, Any]:
        """Block until a pane reaches a state (e.g. Idle), shows a regex, or exits; instead of polling."""
        if timeout_s is None:
            # Unasked, a wait ends (timed_out) before the call guard would cancel it (a `timeout` error);
            # a caller asking for longer than the call timeout gets that error.
            call_timeout_s = tools.guard.limits.call_timeout_s
            timeout_s = max(WAIT_TIMEOUT_S_MIN, min(WAIT_TIMEOUT_S_DEFAULT, call_timeout_s - WAIT_CALL_MARGIN_S))
        if not WAIT_TIMEOUT_S_MIN <= timeout_s <= WAIT_TIMEOUT_S_MAX:
            raise BadRequest(f"timeout_s must be between {WAIT_TIMEOUT_S_MIN} and {WAIT_TIMEOUT_S_MAX}, "
                             f"got {timeout_s}", field="timeout_s")
        states = _check_states(state)
        regex = ScreenPattern(pattern) if pattern is not None else None
        if not (states or regex or exited):
            raise BadRequest("wait_for needs a state, a pattern or exited=true", field="state")
        started = time.monotonic()
        deadline = started + timeout_s
        events: asyncio.Queue[Any] = asyncio.Queue()
        client = current_client()
        # The event connection presents the caller's token too: it may only hear about its own panes.
        watcher = await Client.connect(_socket_path(client), client_name="muxd-mcp-wait",
                                       token=token_of(client), on_event=events.put_nowait)
        try:
            target = (await client.call(Summary, target=pane_id)).summary.pane_id
            await watcher.call(Subscribe, panes=[target])
            # Read the state after subscribing, so a change between the two is not lost.
            current = (await client.call(Summary, target=target)).summary.activity.state
            exit_code: int | None = None
            gone = current == "Exited"
            screen_seen: str | None = None  # the screen last matched: an unchanged one is not matched again

            async def result(matched: bool, reason: str, **extra: Any) -> dict[str, Any]:
                elapsed_s = round(time.monotonic() - started, 3)
                try:  # the summary at the moment the wait ended
                    now = (await client.call(Summary, target=target)).summary
                except NotFound:
                    now = None  # the pane was removed with its program
                return {"pane_id": target, "matched": matched, "reason": reason, "state": current,
                        "elapsed_s": elapsed_s, **extra, "summary": _summary_dict(now) if now else None}

            while True:
                if states and current in states:
                    return await result(True, "state")
                if exited and gone:
                    return await result(True, "exited", exit_code=exit_code or await _exit_code(client, target))
                if regex is not None and not gone:
                    text = (await client.call(CapturePane, target=target, start=-WAIT_SCREEN_LINES)).text
                    if text != screen_seen:
                        screen_seen = text
                        line = await regex.last_matching_line(text)
                        if line is not None:
                            return await result(True, "pattern", line=line.rstrip())
                if gone and not exited:
                    return await result(False, "exited", exit_code=exit_code or await _exit_code(client, target))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return await result(False, "timed_out")
                wait_s = min(remaining, WAIT_SCREEN_POLL_S) if regex is not None else remaining
                try:
                    event = await asyncio.wait_for(events.get(), wait_s)
                except TimeoutError:
                    continue
                if isinstance(event, AgentStateChanged) and event.pane_id == target:
                    current = event.state.activity.state
                    gone = gone or current == "Exited"
                elif isinstance(event, PaneExited) and event.pane_id == target:
                    gone, exit_code = True, event.exit_code
        finally:
            await watcher.close()
