"""History commands: prompts and commands as executions, their records and the queries over
them (seeds 000, 003, 004). What a principal sees is cut to its scope here, in the daemon."""

from __future__ import annotations

import asyncio
import functools
import math
import shlex
import time
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from muxd.config import (
    EXECUTION_LIST_LIMIT_MAX, EXECUTION_TIMEOUT_DEFAULT_S, EXECUTION_TIMEOUT_MAX_S, EXECUTION_WAIT_MAX_S,
    TIMELINE_BUCKET_MIN_S, TIMELINE_BUCKETS_MAX,
)
from muxd.daemon.access.control import Principal, current_principal, is_agent_principal
from muxd.daemon.work.background_run import run_in_background_window
from muxd.daemon.commands.table import command
from muxd.daemon.panes.detection import shell_in_front
from muxd.daemon.work import host_sending, id_refs
from muxd.daemon.panes.target import RemotePane, resolve
from muxd.detectors.state import BUSY_STATES
from muxd.errors import BadRequest, Conflict, Forbidden, NotFound, StoreUnavailable
from muxd.executions.record import (
    ACTIVE_STATUSES, FAILED_STATUSES, STATUSES, TRIGGERS, Execution, TriggeredBy, statuses_selected,
)
from muxd.executions.transcript import render
from muxd.protocol.execution_messages import (
    CancelExecution, ExecutionFailures, ExecutionList, ExecutionReply, ExecutionStats, ExecutionTimeline,
    FailureReport, GetExecution, ListExecutions, LiveAgent, RunCommand, ShortIdList, ShortIds, StatsReply,
    SubmitPrompt, TimelineReply, WaitExecutions,
)
from muxd.protocol.fleet_messages import FleetHost, FleetPane
from muxd.protocol.messages import Spawn
from muxd.store.execution_store import EVERYTHING, ExecutionQuery, ExecutionStore, Scope
from muxd.store.hosts import sent_from
from muxd.store.short_ids import EXECUTION_IDS, TASK_IDS, short_ids, typed_key
from muxd.telemetry.trace_ids import query_trace_id, trace_context

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon

STATS_FAILURES_MAX = 50


def scope_of(daemon: Daemon, principal: Principal) -> Scope:
    """What `principal` may see of the history: its panes' executions and those it triggered."""
    panes = daemon.access.visible(principal)
    if panes is None:
        return EVERYTHING
    return Scope(pane_keys=frozenset(daemon.executions.pane_key(p) for p in panes), principal=principal.name,
                 sent_as=sent_as(daemon, principal))


def sent_as(daemon: Daemon, principal: Principal) -> str | None:
    """The name other hosts record `principal`'s sends under (None: this daemon sends to none)."""
    link = daemon.host_link
    return sent_from(principal.name, link.host) if link is not None else None


def store_of(daemon: Daemon) -> ExecutionStore:
    store = daemon.executions.store
    if store is None:
        raise StoreUnavailable("the history is off in this server (MUXD_HISTORY=0)")
    return store


def trigger_of(principal: Principal, asked: TriggeredBy) -> TriggeredBy:
    """What a request by `principal` is recorded as triggered by: "agent" whenever an agent's own
    token (agent:%N) asked, whichever client it went through (MCP, the CLI); else what it says."""
    return "agent" if is_agent_principal(principal.name) else asked


def _check_seconds(name: str, value: float | None, low: float, high: float) -> None:
    if value is not None and not (math.isfinite(value) and low <= value <= high):
        raise BadRequest(f"{name} must be between {low:g} and {high:g} seconds, got {value}", field=name)


def _check_page(limit: int, offset: int, high: int = EXECUTION_LIST_LIMIT_MAX) -> None:
    if not 1 <= limit <= high:
        raise BadRequest(f"limit must be between 1 and {high}, got {limit}", field="limit")
    if offset < 0:
        raise BadRequest(f"offset must be >= 0, got {offset}", field="offset")


async def history_of(daemon: Daemon, scope: Scope) -> ExecutionStore:
    """The store, for a query over the history, once the saves put off are written (a turn's row
    waits to be written with its end: a reader asks for it now); store_unavailable while executions
    `scope` may see wait in memory for it (a list without them would be wrong, not short)."""
    store = store_of(daemon)
    backlog = daemon.executions.backlog
    waiting = sum(1 for e in backlog if scope.sees(e)) if backlog is not None else 0
    if waiting:
        raise StoreUnavailable(f"the history is incomplete: {waiting} execution(s) wait in memory to be written "
                               f"({backlog.reason}); retrying; muxd show ID reads one meanwhile",  # type: ignore[union-attr]
                               unwritten=waiting)
    await store.written()
    return store


async def record_anywhere(daemon: Daemon, execution_id: str) -> Execution | None:
    """The newest record of `execution_id`: this daemon's, the shared history's, else (sent to
    another host and not delivered yet) its send action's."""
    found = await daemon.executions.record(execution_id)
    if found is None and daemon.host_link is not None:
        found = await host_sending.sent_record(daemon.host_link, execution_id)
    return found


async def find_execution(daemon: Daemon, execution_id: str, scope: Scope) -> Execution:
    """The newest record of `execution_id` that `scope` may see (NotFound otherwise: existence does not leak)."""
    store_of(daemon)
    found = await record_anywhere(daemon, execution_id)
    backlog = daemon.executions.backlog
    lost = backlog.lost(execution_id) if found is None and backlog is not None else None
    if lost is not None and scope.sees(lost):
        raise StoreUnavailable(f"execution {execution_id} ended ({lost.status}) but was never written: more "
                               f"executions waited for the history database than muxd keeps ({backlog.reason})",  # type: ignore[union-attr]
                               execution_id=execution_id)
    if found is None or not scope.sees(found):
        raise NotFound(f"no execution {execution_id}", execution_id=execution_id)
    return found


async def execution_named(daemon: Daemon, ref: str, scope: Scope, field: str = "execution_id") -> Execution:
    """The execution that `ref` names for `scope`: its id, or a short id or prefix of it (id_refs)."""
    execution_id = await id_refs.execution_id(daemon.executions, store_of(daemon), ref, scope, field)
    return await find_execution(daemon, execution_id, scope)


async def wait_ended(daemon: Daemon, found: list[Execution], *, any_one: bool, timeout_s: float) -> bool:
    """Wait until each (or any one) of `found` ended, this daemon's and other hosts' alike; False
    if the time ran out."""
    link = daemon.host_link
    elsewhere = [e.id for e in found if link is not None and e.status in ACTIVE_STATUSES
                 and daemon.executions.live(e.id) is None
                 and await host_sending.host_of(link, e.id) not in (None, link.host)]
    here = [e.id for e in found if e.id not in elsewhere]
    waits = []
    if here or not elsewhere:
        waits.append(daemon.executions.wait(here, any_one=any_one, timeout_s=timeout_s))
    if elsewhere:
        waits.append(host_sending.wait_ended(link, functools.partial(record_anywhere, daemon),  # type: ignore[arg-type]
                                             elsewhere, any_one=any_one, timeout_s=timeout_s))
    return await host_sending.all_or_any(waits, any_one=any_one)


async def _after_wait(daemon: Daemon, execution: Execution, wait_s: float) -> Execution:
    if wait_s <= 0:
        return execution
    await wait_ended(daemon, [execution], any_one=False, timeout_s=wait_s)
    return await find_execution(daemon, execution.id, EVERYTHING)


@command(SubmitPrompt, target="pane", remote=True)
async def submit(daemon: Daemon, req: SubmitPrompt, pane: Pane | RemotePane) -> ExecutionReply:
    store_of(daemon)
    if not req.message.strip():
        raise BadRequest("the message is empty", field="message")
    _check_seconds("timeout_s", req.timeout_s, 1, EXECUTION_TIMEOUT_MAX_S)
    _check_seconds("wait_s", req.wait_s, 0, EXECUTION_WAIT_MAX_S)
    if req.attempt is not None and not 1 <= req.attempt <= 1000:
        raise BadRequest(f"attempt must be between 1 and 1000, got {req.attempt}", field="attempt")
    principal = current_principal()
    if isinstance(pane, RemotePane):  # another host's: its daemon delivers it (daemon/work/host_sending.py)
        sent = {k: v for k, v in msgspec.to_builtins(req).items() if k not in ("id", "type", "target", "wait_s")}
        execution, created = await host_sending.send(daemon.host_link, pane, principal.name, sent)  # type: ignore[arg-type]
    else:
        execution, created = await submit_prompt(daemon, req, pane, principal)
    return ExecutionReply(id=req.id, execution=await _after_wait(daemon, execution, req.wait_s), created=created)


async def submit_prompt(daemon: Daemon, req: SubmitPrompt, pane: Pane, principal: Principal,
                        execution_id: str | None = None) -> tuple[Execution, bool]:
    """`req`'s prompt for `pane`'s agent, sent as `principal` (with the id `execution_id` when
    another host's daemon allocated it); (its execution, created)."""
    if not req.force:
        refuse_without_agent(pane, "force=true" if req.triggered_by == "mcp" else "--force")
    trace_id, span_id = trace_context(req.trace_id, req.span_id)
    return await daemon.executions.submit(
        pane, principal.name, triggered_by=trigger_of(principal, req.triggered_by), message=req.message,
        task_id=req.task_id, trace_id=trace_id, span_id=span_id, attempt=req.attempt,
        idempotency_key=req.idempotency_key, force=req.force, execution_id=execution_id,
        timeout_s=req.timeout_s if req.timeout_s is not None else EXECUTION_TIMEOUT_DEFAULT_S)


def refuse_without_agent(pane: Pane, override: str) -> None:
    """BadRequest when a shell, not an agent, would read the prompt: it would run it as a command
    (a mistyped target). Judged as `shell_in_front` judges, so a pane started a moment ago is
    judged at once: a shell there is refused, an agent still starting (its own process in front)
    is accepted and gets the prompt when it is at its prompt (the tracker judges again then: an
    agent that exited meanwhile leaves the prompt undelivered, `no_agent`)."""
    shell = shell_in_front(pane)
    if shell is not None:
        where = f"{pane.id} ({pane.name})" if pane.name else pane.id
        raise BadRequest(f"no agent in {where}: {shell} runs there and would run the prompt "
                         f"as a command; {override} sends it anyway", field="target", pane=pane.id)


@command(RunCommand)
async def run(daemon: Daemon, req: RunCommand) -> ExecutionReply:
    store_of(daemon)
    if not req.command:
        raise BadRequest("no command to run", field="command")
    _check_seconds("timeout_s", req.timeout_s, 1, EXECUTION_TIMEOUT_MAX_S)
    _check_seconds("wait_s", req.wait_s, 0, EXECUTION_WAIT_MAX_S)
    trace_id, span_id = trace_context(req.trace_id, req.span_id)
    trace = {"trace_id": trace_id, "span_id": span_id} if trace_id else {}
    principal = current_principal()
    if req.target:
        pane = resolve(daemon.registry, "pane", req.target)
        line = req.command[0] if len(req.command) == 1 else shlex.join(req.command)
        execution = daemon.executions.type_command(pane, principal.name, line, trigger_of(principal, "cli"),
                                                   req.timeout_s, **trace)  # type: ignore[arg-type]
    else:
        _, execution = run_in_background_window(daemon.registry, daemon.spawn_pane, daemon.executions,
                                                Spawn(command=list(req.command), cwd=req.cwd, record_as="cli",
                                                      remove_on_exit=not req.keep),
                                                link=trace or None)
    return ExecutionReply(id=req.id, execution=await _after_wait(daemon, execution, req.wait_s))


@command(CancelExecution)
async def cancel(daemon: Daemon, req: CancelExecution) -> ExecutionReply:
    principal = current_principal()
    execution = await execution_named(daemon, req.execution_id, scope_of(daemon, principal))
    check_may_cancel(principal, execution, sent_as(daemon, principal))
    if execution.status not in ACTIVE_STATUSES:
        raise Conflict(f"execution {execution.id} already ended ({execution.status})",
                       execution_id=execution.id, status=execution.status)
    link = daemon.host_link
    if link is not None and daemon.executions.live(execution.id) is None:
        host = await host_sending.host_of(link, execution.id)
        if host is not None and host != link.host:  # another host's: its daemon cancels it
            return ExecutionReply(id=req.id, execution=await host_sending.cancel(link, execution, host, principal.name))
    return ExecutionReply(id=req.id, execution=daemon.executions.cancel(execution.id))


def check_may_cancel(principal: Principal, execution: Execution, sent_as: str | None = None) -> None:
    """Only the principal that started `execution`, or an admin, cancels it (seed 004 FR-012.2,
    AC-005); seeing it is not enough.

    One with no principal was typed by a person at the pane (or read off its screen): that person
    is the socket's owner, so it is an admin's to cancel. A pane-bound token gets nothing more
    over what others started in its own pane: it may still send its pane keys, as a person there
    could, and the history records what they did to the turn; but marking another's execution
    cancelled would hand the orchestrator that sent it a decision the worker made for it.
    `sent_as`: the name `principal`'s sends to another host's pane are recorded under."""
    if principal.tier == "admin" or (execution.principal is not None
                                     and execution.principal in (principal.name, sent_as)):
        return
    if execution.principal is None:
        raise Forbidden(f"execution {execution.id} was typed by a person in the pane: only an admin may cancel it",
                        execution_id=execution.id)
    raise Forbidden(f"execution {execution.id} was started by {execution.principal}: only {execution.principal} "
                    "or an admin may cancel it", execution_id=execution.id, owner=execution.principal)


@command(GetExecution)
async def get_execution(daemon: Daemon, req: GetExecution) -> ExecutionReply:
    execution = await execution_named(daemon, req.execution_id, scope_of(daemon, current_principal()))
    transcript = None
    if req.include_transcript and execution.status not in ACTIVE_STATUSES:
        stored = await daemon.executions.transcript(execution.id)
        try:
            transcript = await asyncio.to_thread(render, stored) if stored is not None else ""
        except ValueError as exc:  # a damaged row: said as the store's damage, in one typed line
            raise StoreUnavailable(f"execution {execution.id}: {exc}", reason="corrupt",
                                   execution_id=execution.id) from exc
    return ExecutionReply(id=req.id, execution=execution, transcript=transcript)


def _query(daemon: Daemon, req: ListExecutions | ExecutionFailures | ExecutionStats | ExecutionTimeline,
           **fields: object) -> ExecutionQuery:
    since = getattr(req, "since", None)
    if since is not None and not math.isfinite(since):
        raise BadRequest("since must be a time", field="since")
    base: dict[str, object] = {"scope": scope_of(daemon, current_principal()), "agent_name": req.agent_name,
                               "since": since, "host": req.host}
    base.update(fields)
    return ExecutionQuery(**base)  # type: ignore[arg-type]


@command(ListExecutions)
async def list_executions(daemon: Daemon, req: ListExecutions) -> ExecutionList:
    _check_page(req.limit, req.offset)
    if req.status is not None and req.status not in STATUSES:
        raise BadRequest(f"status must be one of {', '.join(STATUSES)}", field="status")
    if req.triggered_by is not None and req.triggered_by not in TRIGGERS:
        raise BadRequest(f"triggered_by must be one of {', '.join(TRIGGERS)}", field="triggered_by")
    # status=failed is the failure family (record.FAILED_STATUSES), as every count says it.
    query = _query(daemon, req, statuses=statuses_selected(req.status), triggered_by=req.triggered_by,
                   task_id=await _task_named(daemon, req.task_id), trace_id=await _trace_named(daemon, req.trace_id),
                   until=req.until, limit=req.limit,
                   offset=req.offset)
    if req.active:  # pending and running live in the daemon (and in other hosts' for what it sent them)
        rows = [e for e in await _active_sent(daemon, query) if _matches(e, query)]
        rows.sort(key=lambda e: e.started_at or e.queued_at or 0.0, reverse=True)
        return ExecutionList(id=req.id, executions=rows[req.offset:req.offset + req.limit], total=len(rows))
    rows, total = await (await history_of(daemon, query.scope)).list(query)
    return ExecutionList(id=req.id, executions=rows, total=total)


async def _active_sent(daemon: Daemon, query: ExecutionQuery) -> list[Execution]:
    """The pending and running executions `query` may see: this daemon's, and those it sent to
    another host's pane (their pane `%N@host`), of `query.host` only when it names one."""
    link = daemon.host_link
    here = link is None or query.host in (None, link.host)
    rows = daemon.executions.active(query.scope) if here else []
    if link is not None and query.host != link.host:
        sent = await host_sending.sent_running(link, functools.partial(record_anywhere, daemon),
                                               EXECUTION_LIST_LIMIT_MAX)
        rows += [e for e in sent if query.scope.sees(e)
                 and (query.host is None or e.pane_id.endswith(f"@{query.host}"))]
    return rows


def _matches(e: Execution, q: ExecutionQuery) -> bool:
    return (not q.statuses or e.status in q.statuses) and all(want is None or have == want for have, want in (
        (e.agent_name, q.agent_name), (e.status, q.status), (e.triggered_by, q.triggered_by),
        (e.task_id, q.task_id), (e.trace_id, q.trace_id)))


@command(ExecutionFailures)
async def failures(daemon: Daemon, req: ExecutionFailures) -> FailureReport:
    _check_page(req.limit, 0, STATS_FAILURES_MAX)
    query = _query(daemon, req, task_id=await _task_named(daemon, req.task_id), statuses=FAILED_STATUSES,
                   limit=req.limit)
    store = await history_of(daemon, query.scope)
    # The two reads at once, on the store's reader threads; no total is wanted of the failures.
    rows, patterns = await asyncio.gather(store.unique_failures(query) if req.unique_errors else store.page(query),
                                          store.error_patterns(query))
    return FailureReport(id=req.id, failures=rows[:req.limit], patterns=patterns)


@command(ExecutionStats)
async def stats(daemon: Daemon, req: ExecutionStats) -> StatsReply:
    _check_page(max(req.failures_limit, 1), 0, STATS_FAILURES_MAX)
    query = _query(daemon, req, limit=EXECUTION_LIST_LIMIT_MAX)
    store = await history_of(daemon, query.scope)
    per_agent, recent = await asyncio.gather(
        store.stats(query), store.page(replace(query, statuses=FAILED_STATUSES, limit=max(req.failures_limit, 1))))
    live = []
    here = req.host is None or req.host == daemon.access.db.host  # this daemon's panes are its host's
    for pane in daemon.registry.all_panes() if here else ():
        run = daemon.executions.panes.get(pane.id)
        name = pane.name or pane.id
        if run is None or (req.agent_name is not None and name != req.agent_name):
            continue
        if not visible_pane(daemon, pane.id, query.scope):
            continue
        running = run.tracker.running or run.program
        live.append(LiveAgent(agent_name=name, pane_id=pane.id, agent_type=pane.agent.agent_type,
                              is_agent=pane.agent.is_agent,
                              state=pane.agent.activity.state, is_busy=run.tracker.is_busy or run.program is not None,
                              queue_length=run.tracker.queue_length,
                              running_execution_id=running.id if running is not None else None))
    others = req.host is None or not here
    if others and daemon.fleet is not None and query.scope.pane_keys is None:  # in no pane's scope
        live = _other_hosts_live(await daemon.fleet.others(req.host), req.agent_name) + live
    return StatsReply(id=req.id, agents=per_agent, live=live, recent_failures=recent[:req.failures_limit])


@command(ExecutionTimeline)
async def timeline(daemon: Daemon, req: ExecutionTimeline) -> TimelineReply:
    if req.bucket_s < TIMELINE_BUCKET_MIN_S:
        raise BadRequest(f"bucket_s must be at least {TIMELINE_BUCKET_MIN_S} seconds", field="bucket_s")
    end = req.until if req.until is not None else time.time()
    if not (math.isfinite(req.since) and math.isfinite(end)) or (end - req.since) / req.bucket_s > TIMELINE_BUCKETS_MAX:
        raise BadRequest(f"a timeline holds at most {TIMELINE_BUCKETS_MAX} buckets: a later since or longer buckets",
                         field="since")
    query = _query(daemon, req, until=req.until)
    buckets = await (await history_of(daemon, query.scope)).timeline(query, req.bucket_s)
    return TimelineReply(id=req.id, since=req.since, bucket_s=req.bucket_s, buckets=buckets)


def _other_hosts_live(fleet: tuple[list[FleetHost], list[FleetPane]], agent_name: str | None) -> list[LiveAgent]:
    """Other hosts' agent panes as live entries, named as their history names them (their pane's
    name; an unnamed one by its target, %N@host, as %N is this host's)."""
    live = []
    for entry in fleet[1]:
        pane, state = entry.pane, entry.summary.activity.state
        name = pane.name or entry.target
        if agent_name is None or name == agent_name:
            live.append(LiveAgent(agent_name=name, pane_id=entry.target, agent_type=pane.agent.agent_type,
                                  is_agent=pane.agent.is_agent, state=state, is_busy=state in BUSY_STATES,
                                  queue_length=0, host=entry.host, stale=entry.stale))
    return live


def visible_pane(daemon: Daemon, pane_id: str, scope: Scope) -> bool:
    return scope.pane_keys is None or daemon.executions.pane_key(pane_id) in scope.pane_keys


@command(WaitExecutions)
async def wait_executions(daemon: Daemon, req: WaitExecutions) -> ExecutionList:
    if not req.execution_ids:
        raise BadRequest("name at least one execution", field="execution_ids")
    _check_seconds("timeout_s", req.timeout_s, 0, EXECUTION_WAIT_MAX_S)
    scope = scope_of(daemon, current_principal())
    # each must exist and be visible
    found = [await execution_named(daemon, ref, scope) for ref in req.execution_ids]
    ended = await wait_ended(daemon, found, any_one=req.mode == "any", timeout_s=req.timeout_s)
    rows = [await find_execution(daemon, execution.id, scope) for execution in found]
    return ExecutionList(id=req.id, executions=rows, total=len(rows), timed_out=not ended)



async def _trace_named(daemon: Daemon, ref: str | None) -> str | None:
    """The trace id a filter's `ref` names: a trace id, or an execution's (short) id for its trace."""
    if ref is None or typed_key(EXECUTION_IDS, ref) is None:
        return query_trace_id(ref)
    scope = scope_of(daemon, current_principal())
    execution_id = await id_refs.execution_id(daemon.executions, store_of(daemon), ref, scope, "trace_id")
    execution = await daemon.executions.record(execution_id)
    if execution is None or not scope.sees(execution):
        return query_trace_id(ref)  # no execution: a trace id spelled short
    if execution.trace_id is None:
        raise BadRequest(f"execution {execution.id} is in no trace", field="trace_id")
    return execution.trace_id


async def _task_named(daemon: Daemon, ref: str | None) -> str | None:
    """The task id a filter's `ref` names: a queue task's by a prefix as `muxd task ls` shows, else
    `ref` as given (an execution's task id is any label its sender chose); None: no filter."""
    return None if ref is None else await id_refs.task_id(daemon.tasks, ref) or ref


@command(ShortIds)
async def short_ids_of(daemon: Daemon, req: ShortIds) -> ShortIdList:
    """Short ids unique in the whole store (an id out of the caller's scope only makes one longer)."""
    if req.kind == "task":
        found = await daemon.tasks.call(lambda c: short_ids(c, TASK_IDS, req.ids), "shortening task ids")
    else:
        others = [e.id for e in daemon.executions.unwritten(EVERYTHING)]
        found = await store_of(daemon).short_ids(list(req.ids), others)
    return ShortIdList(id=req.id, short_ids=found)
