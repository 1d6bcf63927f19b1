"""`wait_for`: a bounded, server-side wait for a pane's agent state, a regex on its screen, its
exit, executions' ends, or any of many panes needing its caller (attention_wait.py).

States and exits arrive as daemon events (Subscribe on a connection of the wait's own), so
they are not polled. The screen has no change events: a regex is re-checked on every event
and every WAIT_SCREEN_POLL_S, when the screen changed (screen_pattern.py bounds each check).
A caller that sent a progress token hears how the wait goes (wait_progress.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Annotated, Any, Literal, get_args

from mcp.server.mcpserver import Context
from pydantic import Field

from muxd.client.connection import Client
from muxd.detectors.state import ActivityState
from muxd.errors import BadRequest, NotFound
from muxd.mcp_server.attention_wait import check_needs, wait_attention
from muxd.mcp_server.link import connect_as_caller, current_client
from muxd.mcp_server.limits import (
    WAIT_CALL_MARGIN_S, WAIT_PATTERN_MAX_CHARS, WAIT_SCREEN_POLL_S, WAIT_STATES_MAX, WAIT_TARGETS_MAX, WAIT_TIMEOUT_S_DEFAULT, WAIT_TIMEOUT_S_MAX,
    WAIT_TIMEOUT_S_MIN,
)
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.screen_pattern import SYNTAX, ScreenPattern
from muxd.mcp_server.summary_tools import READ_ONLY, summary_record
from muxd.mcp_server.execution_views import summary_row
from muxd.mcp_server.wait_progress import WaitProgress
from muxd.mcp_server.wait_schemas import WaitForOutput
from muxd.protocol.execution_messages import WaitExecutions
from muxd.protocol.messages import AgentStateChanged, CapturePane, ListPanes, PaneExited, Subscribe, Summary

STATES: tuple[str, ...] = get_args(ActivityState)
WAIT_SCREEN_LINES = 200  # how far back from the bottom a regex wait looks


def _check_states(state: str | list[str] | None) -> set[str]:
    wanted = [state] if isinstance(state, str) else list(state or [])
    if len(wanted) > WAIT_STATES_MAX:
        raise BadRequest(f"state has {len(wanted)} entries, at most {WAIT_STATES_MAX} allowed", field="state")
    unknown = [s for s in wanted if s not in STATES]
    if unknown:
        raise BadRequest(f"state: unknown state(s) {', '.join(map(repr, unknown))}; known: {', '.join(STATES)}",
                         field="state")
    return set(wanted)


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
        attention: Annotated[str | list[str] | None, Field(
            description="return when a pane needs you: `waiting` (for a yes or an answer), `limited` (usage "
                        "limit), `failed`, `finished` (its turn); one or several. Without pane_id: any pane. "
                        "A need already there answers at once")] = None,
        after: Annotated[float | None, Field(
            description="with attention: only needs begun after this (a result's `since`)")] = None,
        timeout_s: Annotated[float | None, Field(
            description=f"give up after this many seconds (default {WAIT_TIMEOUT_S_DEFAULT:g}, within the call timeout)",
            ge=WAIT_TIMEOUT_S_MIN, le=WAIT_TIMEOUT_S_MAX)] = None,
        ctx: Context | None = None,
    ) -> WaitForOutput:
        """Instead of polling: block until panes reach a state (e.g. Idle), show a regex or exit, until
        executions end, or until any pane needs you (attention: the result names the pane, its question
        or error, its summary). Sends progress notifications when asked for."""
        if timeout_s is None:
            # Unasked, a wait ends (timed_out) before the call guard would cancel it (a `timeout` error);
            # a caller asking for longer than the call timeout gets that error.
            call_timeout_s = tools.guard.limits.call_timeout_s
            timeout_s = max(WAIT_TIMEOUT_S_MIN, min(WAIT_TIMEOUT_S_DEFAULT, call_timeout_s - WAIT_CALL_MARGIN_S))
        deadline = time.monotonic() + timeout_s
        if execution_id is not None:
            if pane_id is not None or state is not None or pattern is not None or exited or attention is not None:
                raise BadRequest("wait_for execution_id takes no pane_id, state, pattern, exited or attention",
                                 field="execution_id")
            ids = _as_list("execution_id", execution_id)
            progress = WaitProgress(ctx, timeout_s, f"waiting on {_count(ids, 'execution')}")
            return await _with_progress(progress, _wait_executions(ids, mode, timeout_s))  # type: ignore[return-value]
        panes = _as_list("pane_id", pane_id)
        if after is not None and attention is None:
            raise BadRequest("after goes with attention (a need's `since`)", field="after")
        if attention is not None:
            if state is not None or pattern is not None or exited:
                raise BadRequest("wait_for attention takes no state, pattern or exited", field="attention")
            needs = check_needs(attention)
            whom = f"{'any of ' if mode == 'any' and len(panes) > 1 else ''}{_count(panes, 'pane')}" if panes \
                else "any pane"
            progress = WaitProgress(ctx, timeout_s, f"waiting on {whom} for {', '.join(sorted(needs))}")
            return await wait_attention(panes or None, needs, every=mode == "all", after=after,  # type: ignore[return-value]
                                        deadline=deadline, progress=progress)
        if not panes:
            raise BadRequest("wait_for needs a pane_id (or attention, or an execution_id)", field="pane_id")
        states = _check_states(state)
        regex = ScreenPattern(pattern) if pattern is not None else None
        if not (states or regex or exited):
            raise BadRequest("wait_for needs a state, a pattern, exited=true or attention", field="state")
        goal = ", ".join(sorted(states)) if states else (f"/{pattern}/" if regex is not None else "its exit")
        progress = WaitProgress(ctx, timeout_s, f"waiting on {panes[0] if len(panes) == 1 else _count(panes, 'pane')}"
                                                f" for {goal}")
        if len(panes) == 1:
            return await _with_progress(  # type: ignore[return-value]
                progress, _wait_pane(panes[0], states, regex, exited, deadline, progress))
        return await _with_progress(  # type: ignore[return-value]
            progress, _wait_panes(panes, states, regex, exited, deadline, mode, progress))

    async def _wait_panes(panes: list[str], states: set[str], regex: ScreenPattern | None, exited: bool,
                          deadline: float, mode: str, progress: WaitProgress) -> dict[str, Any]:
        started = time.monotonic()
        waits = [asyncio.ensure_future(_wait_pane(p, states, regex, exited, deadline, progress)) for p in panes]
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
                         deadline: float, progress: WaitProgress) -> dict[str, Any]:
        started = time.monotonic()
        events: asyncio.Queue[Any] = asyncio.Queue()
        client = current_client()
        # The event connection presents the caller's token too: it may only hear about its own panes.
        watcher = await connect_as_caller("muxd-mcp-wait", events.put_nowait)
        try:
            target = (await client.call(Summary, target=pane_id)).summary.pane_id
            await watcher.call(Subscribe, panes=[target])
            # Read the state after subscribing, so a change between the two is not lost.
            current = (await client.call(Summary, target=target)).summary.activity.state
            progress.state(target, current)
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
                        "elapsed_s": elapsed_s, **extra, "summary": summary_record(now) if now else None}

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
                    progress.state(target, current)
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


def _count(items: list[str], noun: str) -> str:
    return items[0] if len(items) == 1 and noun == "pane" else f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"


async def _with_progress(progress: WaitProgress, wait: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """`wait`'s result, told as progress (to a caller that asked) while it runs."""
    progress.start()
    try:
        return await wait
    finally:
        await progress.stop()


async def _wait_executions(ids: list[str], mode: str, timeout_s: float) -> dict[str, Any]:
    if not ids:
        raise BadRequest("execution_id is empty", field="execution_id")
    started = time.monotonic()
    reply = await current_client().call(WaitExecutions, execution_ids=ids, mode=mode, timeout_s=timeout_s)
    return {"matched": not reply.timed_out, "reason": "timed_out" if reply.timed_out else "ended",
            "elapsed_s": round(time.monotonic() - started, 3),
            "executions": [summary_row(e) for e in reply.executions]}
