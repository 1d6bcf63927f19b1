"""Task queue commands (seed 001): create, list, read, claim, update, complete, review, search
the knowledge, and dispatch a pane. Arguments are checked here against the seed's bounds; the
rules of the queue are the store's (muxd/store/task_store.py), one transaction each."""

from __future__ import annotations

import json
import math
import os
import time
from typing import TYPE_CHECKING, Any

import msgspec

from muxd.config import (
    KNOWLEDGE_SEARCH_LIMIT_MAX, TASK_JSON_MAX_BYTES,
    TASK_LEASE_MAX_S, TASK_LEASE_MIN_S, TASK_LIST_LIMIT_MAX, TASK_NEXT_LIMIT_MAX, TASK_PRIORITY_MAX,
    TASK_VERIFY_ETA_CI_S, TASK_VERIFY_ETA_COMMANDS_S,
)
from muxd.daemon.access.control import Principal, check_runs_commands, current_principal
from muxd.daemon.access.request_rules import request_name
from muxd.daemon.commands.table import command
from muxd.daemon.commands.executions import scope_of
from muxd.daemon.panes.target import RemotePane
from muxd.daemon.work import host_sending, id_refs
from muxd.daemon.work.task_dispatch import start_dispatch, stop_dispatch
from muxd.errors import BadRequest, Forbidden
from muxd.protocol.task_messages import (
    ActionableTask, ClaimTask, CompleteTask, CreateTask, Dispatcher, DispatchReply, DispatchTasks, GetTask,
    KnowledgeList,
    ListTasks, NextActionable, ReviewTask, SearchKnowledge, TaskList, TaskReply, UpdateTaskStatus,
)
from muxd.store import knowledge, task_store
from muxd.store.execution_store import ExecutionQuery
from muxd.tasks.model import STATES, Learning, Task, Verification

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon

TASK_EXECUTIONS_SHOWN = 20
_ETA = {"none": 0, "manual": None, "commands": TASK_VERIFY_ETA_COMMANDS_S, "github_pr": TASK_VERIFY_ETA_CI_S,
        "gitlab_mr": TASK_VERIFY_ETA_CI_S}


async def _task_id(daemon: Daemon, ref: str) -> str:
    """A task id from itself or a unique prefix of it (what `muxd task ls` shows)."""
    return await id_refs.task_id(daemon.tasks, ref) or ref.strip().lower()


def _check_int(field: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise BadRequest(f"{field} must be between {low} and {high}, got {value}", field=field)


def _check_json(field: str, value: dict[str, Any] | None) -> None:
    if value is not None and len(json.dumps(value, default=str)) > TASK_JSON_MAX_BYTES:
        raise BadRequest(f"{field} is over {TASK_JSON_MAX_BYTES} bytes as JSON", field=field)


def _verification(spec: Any) -> Verification:
    if spec.kind == "commands" and not any(line.strip() for line in spec.commands):
        raise BadRequest("a commands verification needs at least one command", field="verification.commands")
    if spec.kind != "commands" and spec.commands:
        raise BadRequest(f"a {spec.kind} verification takes no commands", field="verification.commands")
    if spec.cwd is not None and not os.path.isdir(os.path.expanduser(spec.cwd)):
        raise BadRequest(f"verification.cwd {spec.cwd!r} is not a directory", field="verification.cwd")
    if spec.timeout_s is not None and not (math.isfinite(spec.timeout_s) and 1 <= spec.timeout_s <= 86400):
        raise BadRequest("verification.timeout_s must be between 1 and 86400 seconds", field="verification.timeout_s")
    return Verification(kind=spec.kind, commands=[c for c in spec.commands if c.strip()],
                        cwd=os.path.expanduser(spec.cwd) if spec.cwd else None, timeout_s=spec.timeout_s)


def _check_commands_author(daemon: Daemon, principal: Principal, req: CreateTask) -> None:
    """A commands check is shell commands muxd runs later, in a window of its own, for whoever
    completes the task: only a principal that may `run` them now may write them (run's words)."""
    try:
        check_runs_commands(principal)
    except Forbidden as exc:
        refused = Forbidden(f"a commands verification is shell commands muxd runs: {exc.message}",
                            **exc.detail, field="verification.commands")
        daemon.access.denied(principal, request_name(req), msgspec.to_builtins(req), refused, kind="request")
        raise refused from None


@command(CreateTask)
async def create_task(daemon: Daemon, req: CreateTask) -> TaskReply:
    if not req.title.strip():
        raise BadRequest("the title is empty", field="title")
    _check_int("priority", req.priority, 0, TASK_PRIORITY_MAX)
    _check_json("context", req.context)
    principal = current_principal()
    if req.verification.kind == "commands":  # refused before its cwd is looked at: no probing of paths
        _check_commands_author(daemon, principal, req)
    verification = _verification(req.verification)
    depends_on = [await _task_id(daemon, ref) for ref in dict.fromkeys(req.depends_on)]
    task = await daemon.tasks.call(lambda c: task_store.create_task(
        c, title=req.title.strip(), description=req.description, plan=req.plan, priority=req.priority,
        verification=verification, depends_on=depends_on, context=req.context,
        created_by=principal.name, now=time.time()), "creating a task")
    daemon.tasks.changed(task)
    return TaskReply(id=req.id, task=task)


@command(ListTasks)
async def list_tasks(daemon: Daemon, req: ListTasks) -> TaskList:
    _check_int("limit", req.limit, 1, TASK_LIST_LIMIT_MAX)
    if req.offset < 0:
        raise BadRequest(f"offset must be >= 0, got {req.offset}", field="offset")
    for state in req.states:
        if state not in STATES:
            raise BadRequest(f"state must be one of {', '.join(STATES)}, got {state!r}", field="states")
    tasks, total = await daemon.tasks.call(lambda c: task_store.list_tasks(
        c, states=tuple(req.states) or None, plan=req.plan, claimed_by=req.claimed_by, limit=req.limit,
        offset=req.offset, now=time.time(), host=req.host, newest_first=req.newest_first), "listing tasks")
    return TaskList(id=req.id, tasks=tasks, total=total)


@command(GetTask)
async def get_task(daemon: Daemon, req: GetTask) -> TaskReply:
    def read(c: Any) -> tuple[Task, list[Any], list[Any]]:
        return task_store.get_task(c, task_id), task_store.task_events(c, task_id), \
            task_store.task_reviews(c, task_id)

    task_id = await _task_id(daemon, req.task_id)
    task, events, reviews = await daemon.tasks.call(read, "reading a task")
    executions = []
    store = daemon.executions.store
    if store is not None:
        scope = scope_of(daemon, current_principal())
        rows, _ = await store.list(ExecutionQuery(scope=scope, task_id=task.id, limit=TASK_EXECUTIONS_SHOWN))
        executions = [e for e in rows if scope.sees(e)]
    return TaskReply(id=req.id, task=task, events=events, reviews=reviews, executions=executions)


@command(NextActionable)
async def next_actionable(daemon: Daemon, req: NextActionable) -> TaskList:
    _check_int("limit", req.limit, 1, TASK_NEXT_LIMIT_MAX)
    if req.priority_lte is not None:
        _check_int("priority_lte", req.priority_lte, 0, TASK_PRIORITY_MAX)

    def read(c: Any) -> list[ActionableTask]:
        tasks = task_store.next_actionable(c, plan=req.plan, priority_lte=req.priority_lte, limit=req.limit,
                                           now=time.time(), max_attempts=daemon.tasks.max_attempts, host=req.host)
        return [_with_digest(c, task) for task in tasks]

    actionable = await daemon.tasks.call(read, "reading the next tasks")
    return TaskList(id=req.id, actionable=actionable, total=len(actionable))


def _with_digest(c: Any, task: Task) -> ActionableTask:
    """`task` with the knowledge relevant to it; a failed search leaves it without, never in error."""
    hits = knowledge.digest_or_none(c, task)
    return ActionableTask(task=task, knowledge=hits or [], knowledge_error=hits is None)


@command(ClaimTask)
async def claim_task(daemon: Daemon, req: ClaimTask) -> TaskReply:
    _check_int("lease_s", req.lease_s, TASK_LEASE_MIN_S, TASK_LEASE_MAX_S)
    principal = current_principal().name
    task_id = await _task_id(daemon, req.task_id)
    task, claimed = await daemon.tasks.call(lambda c: task_store.claim(
        c, task_id, principal, req.lease_s, time.time(), max_attempts=daemon.tasks.max_attempts), "claiming a task")
    if claimed:
        daemon.tasks.changed(task)
    return TaskReply(id=req.id, task=task, created=claimed)


@command(UpdateTaskStatus)
async def update_task_status(daemon: Daemon, req: UpdateTaskStatus) -> TaskReply:
    _check_json("context", req.context)
    principal = current_principal().name
    task_id = await _task_id(daemon, req.task_id)
    task = await daemon.tasks.call(lambda c: task_store.update_status(
        c, task_id, principal, req.status, heartbeat=req.heartbeat, reason=req.reason, context=req.context,
        external_ref=req.external_ref, now=time.time(), max_attempts=daemon.tasks.max_attempts),
        "updating a task")
    daemon.tasks.changed(task)
    return TaskReply(id=req.id, task=task)


@command(CompleteTask)
async def complete_task(daemon: Daemon, req: CompleteTask) -> TaskReply:
    _check_json("output", req.output)
    for i, learning in enumerate(req.learnings):
        if not learning.content.strip():
            raise BadRequest(f"learnings[{i}].content is empty", field="learnings")
    learnings = [Learning(content=item.content, title=item.title, tags=list(item.tags)) for item in req.learnings]
    principal = current_principal().name
    task_id = await _task_id(daemon, req.task_id)
    task, knowledge_ids, not_stored = await daemon.tasks.call(lambda c: task_store.complete(
        c, task_id, principal, output=req.output, learnings=learnings, external_ref=req.external_ref,
        knowledge_quota=daemon.tasks.knowledge_quota, now=time.time(), max_attempts=daemon.tasks.max_attempts),
        "completing a task")
    daemon.tasks.changed(task)
    daemon.tasks.verify(task)
    return TaskReply(id=req.id, task=task, knowledge_ids=knowledge_ids,
                     verification_eta_s=_ETA.get(task.verification.kind),
                     learnings_not_stored=len(learnings) - len(knowledge_ids), learnings_not_stored_reason=not_stored)


@command(ReviewTask)
async def review_task(daemon: Daemon, req: ReviewTask) -> TaskReply:
    if req.verdict != "reject" and req.final:
        raise BadRequest("final applies to a reject only", field="final")
    if req.verdict != "comment" and req.blocking:
        raise BadRequest("blocking applies to a comment only", field="blocking")
    principal = current_principal().name
    task_id = await _task_id(daemon, req.task_id)
    task = await daemon.tasks.call(lambda c: task_store.review(
        c, task_id, principal, req.verdict, comment=req.comment, blocking=req.blocking, final=req.final,
        now=time.time()), "reviewing a task")
    daemon.tasks.changed(task)
    return TaskReply(id=req.id, task=task)


@command(SearchKnowledge)
async def search_knowledge(daemon: Daemon, req: SearchKnowledge) -> KnowledgeList:
    _check_int("limit", req.limit, 1, KNOWLEDGE_SEARCH_LIMIT_MAX)
    if not (math.isfinite(req.min_score) and 0.0 <= req.min_score <= 1.0):
        raise BadRequest(f"min_score must be between 0 and 1, got {req.min_score}", field="min_score")
    if not req.query.strip():
        raise BadRequest("the query is empty", field="query")
    entries = await daemon.tasks.call(lambda c: knowledge.search(c, req.query, limit=req.limit,
                                                                 min_score=req.min_score), "searching knowledge")
    return KnowledgeList(id=req.id, entries=entries)


@command(DispatchTasks, target="pane", remote=True)
async def dispatch_tasks(daemon: Daemon, req: DispatchTasks, pane: Pane | RemotePane) -> DispatchReply:
    if isinstance(pane, RemotePane):  # another host's: its daemon dispatches (daemon/work/host_sending.py)
        answered = await host_sending.dispatch(daemon.host_link, pane, current_principal().name,  # type: ignore[arg-type]
                                               {"plan": req.plan, "stop": req.stop})
        return DispatchReply(id=req.id, dispatchers=msgspec.convert(answered, list[Dispatcher]))
    return DispatchReply(id=req.id, dispatchers=dispatch_pane(daemon, req, pane))


def dispatch_pane(daemon: Daemon, req: DispatchTasks, pane: Pane) -> list[Dispatcher]:
    """Start (or stop) dispatching tasks to `pane` as `req` asks; every dispatcher of this daemon."""
    if req.stop:
        stop_dispatch(daemon.tasks, pane.id)
    else:
        if pane.exited:
            raise BadRequest(f"pane {pane.id} has exited", pane=pane.id)
        if daemon.executions.store is None:
            raise BadRequest("dispatch needs the execution history (MUXD_HISTORY=0 turns it off)")
        start_dispatch(daemon.tasks, pane, req.plan)
    return [d.info() for d in daemon.tasks.dispatchers.values()]
