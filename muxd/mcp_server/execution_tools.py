"""The execution tools of seeds 000 and 004: send a prompt as an execution, follow it, cancel
it, and ask the history what ran, how it ended and what it cost."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from mcp_types import ToolAnnotations
from pydantic import Field

from muxd.config import EXECUTION_TIMEOUT_MAX_S, EXECUTION_WAIT_MAX_S, PROMPT_MAX_CHARS
from muxd.errors import NotFound
from muxd.mcp_server.execution_schemas import (
    ActiveExecutionRowOutput, AgentActivitySummaryOutput, AgentRowOutput, CancelExecutionOutput,
    ExecutionResultOutput, ListActiveExecutionsOutput, ListRecentExecutionsOutput, OneAgentSummaryOutput,
    SendTaskOutput,
)
from muxd.mcp_server.execution_views import (
    agent_summary, commands_summary, cost_sum, counts, detail, failure_row, iso, rate, summary_row,
)
from muxd.mcp_server.limits import WAIT_TIMEOUT_S_MIN
from muxd.mcp_server.link import current_client
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.summary_tools import READ_ONLY, AnyHostPaneId, HostFilter
from muxd.protocol.execution_messages import (
    CancelExecution, ExecutionStats, GetExecution, ListExecutions, LiveAgent, SubmitPrompt,
)
from muxd.protocol.fleet_messages import HOST_TARGET
from muxd.store.execution_store import AgentStats
from muxd.telemetry.trace_ids import SPAN_ID_HELP, SPAN_ID_PATTERN, TRACE_ID_HELP, TRACE_ID_PATTERN

HOURS_DEFAULT, HOURS_MAX = 24, 168            # seed 000
LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX = 20, 100  # seed 000
RECENT_FAILURES = 5
SEND_TASK = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                            open_world_hint=False)
CANCEL = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

Label = Annotated[str, Field(min_length=1, max_length=256)]
ExecutionId = Annotated[str, Field(description="an execution id (exec_…) from send_task or a list, or a unique "
                                               "start of it or of its last 8 hex digits",
                                   min_length=1, max_length=256)]
Status = Literal["pending", "running", "success", "failed", "cancelled", "timeout", "interrupted"]
Trigger = Literal["manual", "schedule", "agent", "mcp", "cli", "web"]
# One meaning of "failed" everywhere (muxd.executions.record.FAILED_STATUSES).
FAILED_FILTER = ("only executions that ended (or are) so; failed selects every failure: status failed, "
                 "timeout or interrupted (ended without success, not cancelled), each row keeping its own")


def _host_of(pane_id: str) -> dict[str, str]:
    """An execution sent to another host's pane says that host; this host's nothing."""
    found = HOST_TARGET.fullmatch(pane_id)
    return {"host": found[2]} if found else {}


def _since(hours: float) -> float:
    return time.time() - hours * 3600


def live_status(now: LiveAgent | None) -> str:
    """running, idle, gone, or unknown: another host's agent whose daemon stopped beating."""
    if now is None:
        return "gone"
    return "unknown" if now.stale else "running" if now.is_busy else "idle"


def where(now: LiveAgent | None) -> dict[str, Any]:
    """Another host's agent says its host (and whether that host is stale); this host's nothing."""
    return {} if now is None or now.host is None else {"host": now.host, "stale": now.stale}


def register_execution_tools(tools: ToolRegistry) -> None:
    @tools.tool(category="executions", risk="moderate", annotations=SEND_TASK)
    async def send_task(
        pane_id: AnyHostPaneId,
        message: Annotated[str, Field(description="the prompt for the pane's agent", min_length=1,
                                      max_length=PROMPT_MAX_CHARS)],
        task_id: Label | None = None,
        trace_id: Annotated[str | None, Field(description=f"{TRACE_ID_HELP}: correlates retries of one task "
                                                          "(tasks_by_trace)", pattern=TRACE_ID_PATTERN)] = None,
        span_id: Annotated[str | None, Field(description=SPAN_ID_HELP, pattern=SPAN_ID_PATTERN)] = None,
        attempt: Annotated[int | None, Field(description="1 for the first try, 2 for the first retry…",
                                             ge=1, le=1000)] = None,
        idempotency_key: Annotated[str | None, Field(
            description="your second send_task to this pane with the same key returns the first execution instead "
                        "(with another message: conflict); another caller's or pane's same key is another key",
            max_length=256)] = None,
        timeout_s: Annotated[float | None, Field(description="the execution's own time limit; the agent is "
                                                             "interrupted then", ge=1, le=EXECUTION_TIMEOUT_MAX_S)] = None,
        wait: Annotated[bool, Field(description="wait for the result instead of returning the execution_id at once")] = False,
        wait_timeout_s: Annotated[float, Field(description="how long to wait when wait=true (within the call "
                                                           "timeout)", ge=WAIT_TIMEOUT_S_MIN, le=EXECUTION_WAIT_MAX_S)] = 25.0,
        force: Annotated[bool, Field(description="send to a pane with no agent (its shell runs the prompt)")] = False,
        ) -> SendTaskOutput:
        """Send a prompt to the agent in a pane as a tracked execution. Returns execution_id at once
        (poll get_execution_result or wait_for execution_id=…), or with wait=true the result.
        A busy agent gets it when next idle (status pending, queue_position). Sent with a pane
        agent's own token, it is recorded as triggered_by "agent" (principal agent:%N)."""
        wait_s = min(wait_timeout_s, tools.guard.limits.call_timeout_s - 1.0) if wait else 0.0
        reply = await current_client().call(
            SubmitPrompt, target=pane_id, message=message, triggered_by="mcp", task_id=task_id, trace_id=trace_id,
            span_id=span_id, attempt=attempt, idempotency_key=idempotency_key, timeout_s=timeout_s,
            wait_s=max(0.0, wait_s), force=force)
        e = reply.execution
        out: SendTaskOutput = {"execution_id": e.id, "status": e.status, "agent_name": e.agent_name,
                               "pane_id": e.pane_id, "created": reply.created}
        if wait:
            out["execution"] = detail(e)
        return out

    @tools.tool(category="executions", risk="moderate", annotations=CANCEL)
    async def cancel_execution(execution_id: ExecutionId) -> CancelExecutionOutput:
        """Cancel a running execution (the agent's interrupt key is sent) or a pending one that you
        started (an admin: any)."""
        e = (await current_client().call(CancelExecution, execution_id=execution_id)).execution
        return {"execution_id": e.id, "status": e.status, "cancelled": e.status == "cancelled",
                "agent_name": e.agent_name}

    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def list_active_executions() -> ListActiveExecutionsOutput:
        """The executions running or waiting now, with how long each has run: this host's, and those
        sent from here to another host's agent (with their `host`)."""
        reply = await current_client().call(ListExecutions, active=True, limit=LIST_LIMIT_MAX)
        now = time.time()
        rows: list[ActiveExecutionRowOutput] = [
            {**summary_row(e), "running_seconds": round(now - e.started_at, 1) if e.started_at is not None else None,
             "queued_at": iso(e.queued_at), **_host_of(e.pane_id)} for e in reply.executions]
        return {"executions": rows, "count": reply.total}

    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def list_recent_executions(
        agent_name: Annotated[str | None, Field(description="one agent (a pane's name, else its %id); omit for all",
                                                max_length=256)] = None,
        status: Annotated[Status | None, Field(description=FAILED_FILTER)] = None,
        triggered_by: Annotated[Trigger | None, Field(description="only those triggered so")] = None,
        hours: Annotated[float, Field(description="look back this many hours", ge=1, le=HOURS_MAX)] = HOURS_DEFAULT,
        limit: Annotated[int, Field(description="at most this many, newest first", ge=1,
                                    le=LIST_LIMIT_MAX)] = LIST_LIMIT_DEFAULT,
        host: HostFilter = None,
    ) -> ListRecentExecutionsOutput:
        """What ran across the fleet, newest first: status, trigger and principal, duration, cost,
        whether it failed (failed, timeout or interrupted: see status)."""
        reply = await current_client().call(ListExecutions, agent_name=agent_name, status=status,
                                            triggered_by=triggered_by, since=_since(hours), limit=limit, host=host)
        return {"executions": [summary_row(e) for e in reply.executions], "total_count": reply.total,
                "filters_applied": {"hours": hours, "status": status, "agent_name": agent_name,
                                    "triggered_by": triggered_by, "host": host}}

    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def get_execution_result(
        agent_name: Annotated[str, Field(description="the agent that ran it (a pane's name, else its %id)",
                                         min_length=1, max_length=256)],
        execution_id: ExecutionId,
        include_transcript: Annotated[bool, Field(description="add the pane's output during it, as text "
                                                               "(can be large)")] = False,
    ) -> ExecutionResultOutput:
        """One execution in full: message, response, error, duration, cost, tokens, tool calls, who
        triggered it (principal); its transcript if asked."""
        reply = await current_client().call(GetExecution, execution_id=execution_id,
                                            include_transcript=include_transcript)
        e = reply.execution
        if agent_name not in (e.agent_name, e.pane_id):
            raise NotFound(f"agent {agent_name} has no execution {execution_id}", execution_id=execution_id)
        return {"execution": detail(e, reply.transcript, include_transcript)}

    @tools.tool(category="executions", risk="safe", annotations=READ_ONLY)
    async def get_agent_activity_summary(
        agent_name: Annotated[str | None, Field(description="one agent; omit for the whole fleet",
                                                max_length=256)] = None,
        hours: Annotated[float, Field(description="look back this many hours", ge=1, le=HOURS_MAX)] = HOURS_DEFAULT,
        host: HostFilter = None,
    ) -> AgentActivitySummaryOutput:
        """Health of one agent or the fleet: executions, success rate, cost, average duration, busy or
        not, queue length, recent failures. Agents are agent panes (each row says its agent_type);
        commands (muxd run windows, shell lines) are counted apart under `commands`. `failed`
        counts failed + timeout + interrupted (not cancelled); a cost unknown is null, not 0."""
        reply = await current_client().call(ExecutionStats, agent_name=agent_name, since=_since(hours),
                                            failures_limit=RECENT_FAILURES, host=host)
        live = {a.agent_name: a for a in reply.live}
        prompts = {s.agent_name: s for s in reply.agents if s.kind == "prompt"}
        commands = [s for s in reply.agents if s.kind == "command"]
        failures = [failure_row(e) for e in reply.recent_failures]
        if agent_name is not None:
            now, s = live.get(agent_name), prompts.get(agent_name)
            if now is None and s is None and not commands:
                raise NotFound(f"no agent {agent_name} (no pane of that name, no history in {hours} h)",
                               agent_name=agent_name)
            summary: OneAgentSummaryOutput = {
                **agent_summary(s if s is not None else AgentStats(agent_name=agent_name)),
                "is_busy": bool(now and now.is_busy), "queue_length": now.queue_length if now else 0,
                "state": now.state if now else "gone", "pane_id": now.pane_id if now else None,
                "agent_type": (now.agent_type if now else None) or (s.agent_type if s else None),
                "is_agent": bool(now and now.is_agent) or s is not None, **where(now)}
            return {"agent_name": agent_name, "summary": summary, "commands": commands_summary(commands),
                    "recent_failures": failures}
        by_agent: list[AgentRowOutput] = []
        for name in sorted({n for n, a in live.items() if a.is_agent} | set(prompts)):
            s, now = prompts.get(name), live.get(name)
            by_agent.append({
                "agent_name": name, "agent_type": (now.agent_type if now else None) or (s.agent_type if s else None),
                "executions": s.total if s else 0, "success_rate": rate(s.successful, s.total) if s else None,
                # seed 000's name for the agent's total; null while no execution's cost is known
                "cost_usd": cost_sum([s])["total_cost_usd"] if s else None,
                "cost_known_executions": s.cost_known_executions if s else 0,
                "status": live_status(now),
                "is_busy": bool(now and now.is_busy), "queue_length": now.queue_length if now else 0,
                "avg_duration_seconds": round(s.avg_duration_s, 3) if s and s.avg_duration_s is not None else None,
                "last_execution_at": iso(s.last_execution_at) if s else None,
                "last_execution_status": s.last_execution_status if s else None, **where(now),
            })
        return {
            "fleet_summary": {
                "total_agents": len(by_agent), "agents_with_activity": len(prompts),
                **counts(prompts.values()), **cost_sum(prompts.values()),
                "queue_length": sum(a.queue_length for a in live.values() if a.is_agent),
            },
            "by_agent": by_agent,
            "commands": commands_summary(commands),
            "recent_failures": failures,
        }


