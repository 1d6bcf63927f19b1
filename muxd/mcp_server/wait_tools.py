"""`wait_for`: a bounded, server-side wait for a pane's agent state, a regex on its screen, or its exit.

States and exits arrive as daemon events (Subscribe on a connection of the wait's own), so
they are not polled. The screen has no change events: a regex is re-checked on every event
and every WAIT_SCREEN_POLL_S, when the screen changed (screen_pattern.py bounds each check).
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal, get_args

import msgspec
from pydantic import Field

from muxd.client.connection import Client
from muxd.detectors.state import ActivityState
from muxd.errors import BadRequest, NotFound
from muxd.mcp_server.link import current_client, token_of
from muxd.mcp_server.limits import (
    WAIT_CALL_MARGIN_S, WAIT_PATTERN_MAX_CHARS, WAIT_SCREEN_POLL_S, WAIT_STATES_MAX, WAIT_TARGETS_MAX, WAIT_TIMEOUT_S_DEFAULT, WAIT_TIMEOUT_S_MAX,
    WAIT_TIMEOUT_S_MIN,
)
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.screen_pattern import SYNTAX, ScreenPattern
from muxd.mcp_server.summary_tools import READ_ONLY
from muxd.mcp_server.execution_views import summary_row
from muxd.protocol.execution_messages import WaitExecutions
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
        pane_id: Annotated[str | list[str] | None, Field(
            description="the pane (`%N` or its name), or several: mode says whether all or any must match")] = None,
        state: Annotated[str | list[str] | None, Field(
            description=f"return when the agent state is this (or any of these): {', '.join(STATES)}")] = None,
        pattern: Annotated[str | None, Field(
            description=f"return when a screen line matches this regex ({SYNTAX})",
            max_length=WAIT_PATTERN_MAX_CHARS)] = None,
        exited: Annotated[bool, Field(description="return when the pane's program exits")] = False,
        execution_id: Annotated[str | list[str] | None, Field(
            description="return when this execution (or these: all, or any with mode=any) has ended")] = None,
        mode: Annotated[Literal["all", "any"], Field(description="with several panes or executions: wait for "
                                                               "all of them (default) or the first")] = "all",
        timeout_s: Annotated[float | None, Field(
            description=f"give up after this many seconds ({WAIT_TIMEOUT_S_MIN}-{WAIT_TIMEOUT_S_MAX}; default "
                        f"{WAIT_TIMEOUT_S_DEFAULT:g}, kept within the server's per-call timeout)",
            json_schema_extra={"minimum": WAIT_TIMEOUT_S_MIN, "maximum": WAIT_TIMEOUT_S_MAX})
        ] = None,
    ) -> dict[str, Any]:
        """Block until panes reach a state (e.g. Idle), show a regex or exit, or until executions end
        (e.g. every worker's send_task); instead of polling."""
        if timeout_s is None:
            # Unasked, a wait ends (timed_out) before the call guard would cancel it (a `timeout` error);
            # a caller asking for longer than the call timeout gets that error.
            call_timeout_s = tools.guard.limits.call_timeout_s
            timeout_s = max(WAIT_TIMEOUT_S_MIN, min(WAIT_TIMEOUT_S_DEFAULT, call_timeout_s - WAIT_CALL_MARGIN_S))
        if not WAIT_TIMEOUT_S_MIN <= timeout_s <= WAIT_TIMEOUT_S_MAX:
            raise BadRequest(f"timeout_s must be between {WAIT_TIMEOUT_S_MIN} and {WAIT_TIMEOUT_S_MAX}, "
                             f"got {timeout_s}", field="timeout_s")
        if execution_id is not None:
            if pane_id is not None or state is not None or pattern is not None or exited:
                raise BadRequest("wait_for execution_id takes no pane_id, state, pattern or exited", field="execution_id")
            return await _wait_executions(execution_id, mode, timeout_s)
        panes = _as_list("pane_id", pane_id)
        if not panes:
            raise BadRequest("wait_for needs a pane_id (or an execution_id)", field="pane_id")
        states = _check_states(state)
        regex = ScreenPattern(pattern) if pattern is not None else None
        if not (states or regex or exited):
            raise BadRequest("wait_for needs a state, a pattern or exited=true", field="state")
        deadline = time.monotonic() + timeout_s
        if len(panes) == 1:
            return await _wait_pane(panes[0], states, regex, exited, deadline)
        return await _wait_panes(panes, states, regex, exited, deadline, mode)

    async def _wait_panes(panes: list[str], states: set[str], regex: ScreenPattern | None, exited: bool,
                          deadline: float, mode: str) -> dict[str, Any]:
        started = time.monotonic()
        waits = [asyncio.ensure_future(_wait_pane(p, states, regex, exited, deadline)) for p in panes]
        try:
            if mode == "any":
                pending = set(waits)
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    if any(w.result()["matched"] for w in done):
                        break
            else:
                await asyncio.gather(*waits)
        finally:
            for w in waits:
                w.cancel()
        results = [w.result() for w in waits if w.done() and not w.cancelled()]
        matched = [r for r in results if r["matched"]]
        ok = bool(matched) if mode == "any" else len(matched) == len(panes)
        return {"matched": ok, "reason": "all" if ok and mode == "all" else ("any" if ok else "timed_out"),
                "elapsed_s": round(time.monotonic() - started, 3), "panes": results}

    async def _wait_pane(pane_id: str, states: set[str], regex: ScreenPattern | None, exited: bool,
                         deadline: float) -> dict[str, Any]:
        started = time.monotonic()
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


def _as_list(field: str, value: str | list[str] | None) -> list[str]:
    items = [value] if isinstance(value, str) else list(value or [])
    if len(items) > WAIT_TARGETS_MAX:
        raise BadRequest(f"{field} names {len(items)}, at most {WAIT_TARGETS_MAX} allowed", field=field)
    if any(not item or len(item) > 256 for item in items):
        raise BadRequest(f"{field}: each must have 1-256 characters", field=field)
    return items


async def _wait_executions(execution_id: str | list[str], mode: str, timeout_s: float) -> dict[str, Any]:
    ids = _as_list("execution_id", execution_id)
    if not ids:
        raise BadRequest("execution_id is empty", field="execution_id")
    started = time.monotonic()
    reply = await current_client().call(WaitExecutions, execution_ids=ids, mode=mode, timeout_s=timeout_s)
    return {"matched": not reply.timed_out, "reason": "timed_out" if reply.timed_out else "ended",
            "elapsed_s": round(time.monotonic() - started, 3),
            "executions": [summary_row(e) for e in reply.executions]}
