"""CLI commands of the task queue: `muxd task add/ls/show/approve/reject/comment/run/stop` and
`muxd knowledge search`. Tables for people, fitted to the terminal and with short ids
(cli/short_ids.py); `--json` for scripts."""

from __future__ import annotations

import argparse
import time
from typing import Any

from muxd.cli.render import age, one_line, print_fields, print_fitted, print_json, print_line
from muxd.cli.short_ids import add_full_ids_option, shortener
from muxd.cli.table import cli_command
from muxd.errors import BadRequest
from muxd.tasks.model import STATES, Task

TITLE_COLUMN_CHARS = 48
TASK_HELP = "a task id, or its short id as `muxd task ls` shows it"
# On a terminal too narrow for every column, the steps that fit each table (render.fit_table).
TASK_TABLE_FITTING = (
    ("drop", "LEASE"), ("drop", "TRIES"), ("drop", "PRI"), ("cut", "PLAN"), ("cut", "HELD BY"), ("cut", "TITLE"),
    ("drop", "PLAN"), ("drop", "HELD BY"), ("drop", "AGE"),
)
EVENT_TABLE_FITTING = (("cut", "BY"), ("cut", "DETAIL"), ("drop", "FROM"), ("drop", "BY"), ("drop", "DETAIL"))
TASK_EXECUTION_TABLE_FITTING = (("drop", "KIND"), ("cut", "AGENT"), ("drop", "AGENT"))
KNOWLEDGE_TABLE_FITTING = (("cut", "CONTENT"), ("cut", "TITLE"), ("drop", "SCORE"), ("drop", "CONTENT"))


def _lease(task: Task) -> str:
    if task.lease_expires_at is None:
        return ""
    left = task.lease_expires_at - time.time()
    return f"{int(left)}s" if left > 0 else "expired"


def _verification(args: argparse.Namespace) -> dict[str, Any]:
    """The task's VerificationSpec, as the fields the daemon reads it from."""
    if args.verify_commands:
        if args.verify not in (None, "commands"):
            raise BadRequest("--verify-cmd goes with --verify commands (or alone)")
        return {"kind": "commands", "commands": args.verify_commands, "cwd": args.verify_cwd}
    return {"kind": args.verify or "none", "cwd": args.verify_cwd}


def _print_task(task: Task) -> None:
    result = task.verification_result
    check = task.verification.kind
    if task.verification.commands:
        check += ": " + " && ".join(task.verification.commands)
    if result is not None:
        check += f" ({result.status}" + (f", exit {result.exit_code}" if result.exit_code is not None else "") + ")"
    rows = [["id", task.id], ["title", task.title], ["state", task.state], ["priority", str(task.priority)],
            ["plan", task.plan or ""], ["verification", check],
            ["depends on", ", ".join(task.depends_on)], ["held by", task.claimed_by or ""],
            ["lease", _lease(task)], ["attempts", str(task.attempts)], ["external ref", task.external_ref or ""],
            ["last error", task.last_error or ""],
            ["created", f"{age(task.created_at)} ago by {task.created_by or '-'}"
                        + (f" through {task.host}" if task.host else "")]]
    print_fields(rows)
    for heading, text in (("description", task.description), ("feedback", task.feedback),
                          ("check output", result.output if result else None)):
        if text:
            print(f"\n{heading}:")
            for line in text.splitlines():
                print_line(f"  {line}")


def _configure_task(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="task_action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add a task to the queue")
    add.add_argument("title")
    add.add_argument("-d", "--description", default="")
    add.add_argument("--plan", help="a plan's name (made if new) or id")
    add.add_argument("-p", "--priority", type=int, default=500, help="0-1000, smaller first (default 500)")
    add.add_argument("--verify", choices=("none", "manual", "commands", "github_pr", "gitlab_mr"),
                     help="how completion is checked (default none)")
    add.add_argument("--verify-cmd", dest="verify_commands", action="append", default=[], metavar="CMD",
                     help="a command that must exit 0 (repeatable; implies --verify commands)")
    add.add_argument("--verify-cwd", metavar="DIR", help="where the check runs")
    add.add_argument("--depends-on", dest="depends_on", action="append", default=[], metavar="TASK", help=TASK_HELP)
    add.add_argument("--json", action="store_true")
    ls = actions.add_parser("ls", aliases=["list"], help="tasks in queue order")
    ls.add_argument("--state", dest="states", action="append", choices=STATES, default=[])
    ls.add_argument("--plan")
    ls.add_argument("--held-by", dest="claimed_by", metavar="PRINCIPAL")
    ls.add_argument("--host", help="only tasks created through one daemon's host (its MUXD_HOST; default: any)")
    ls.add_argument("--limit", type=int, default=50)
    ls.add_argument("--offset", type=int, default=0)
    ls.add_argument("--newest-first", action="store_true",
                    help="by their last move, the latest first (default: queue order, priority then age)")
    add_full_ids_option(ls)
    ls.add_argument("--json", action="store_true")
    show = actions.add_parser("show", help="one task with its events, reviews and executions")
    show.add_argument("task", metavar="TASK", help=TASK_HELP)
    add_full_ids_option(show)
    show.add_argument("--json", action="store_true")
    for verb, what in (("approve", "approve a task waiting for review (done), or lift its blockers"),
                       ("reject", "send a task under review back to its holder (--fail: fail it)"),
                       ("comment", "comment on a task (--blocking: nobody may work on it until approved)")):
        review = actions.add_parser(verb, help=what)
        review.add_argument("task", metavar="TASK", help=TASK_HELP)
        review.add_argument("-m", "--message", dest="comment", help="what to tell the worker")
        if verb == "reject":
            review.add_argument("--fail", dest="final", action="store_true", help="fail the task for good")
        if verb == "comment":
            review.add_argument("--blocking", action="store_true")
        review.add_argument("--json", action="store_true")
    run = actions.add_parser("run", help="make muxd the worker loop of an agent pane")
    run.add_argument("-t", dest="target", required=True, metavar="PANE")
    run.add_argument("--plan", help="only tasks of this plan")
    stop = actions.add_parser("stop", help="stop dispatching tasks to a pane")
    stop.add_argument("-t", dest="target", required=True, metavar="PANE")


@cli_command("task")(_configure_task)
def task(client: Any, args: argparse.Namespace) -> int:
    action = args.task_action
    if action == "add":
        reply = client.call("create-task", "task", title=args.title, description=args.description, plan=args.plan,
                            priority=args.priority, verification=_verification(args),
                            depends_on=args.depends_on)
        print_json(reply.task) if args.json else print(f"{reply.task.id} {reply.task.state}")
        return 0
    if action in ("ls", "list"):
        reply = client.call("list-tasks", "task-list", states=args.states, plan=args.plan, claimed_by=args.claimed_by,
                            limit=args.limit, offset=args.offset, host=args.host, newest_first=args.newest_first)
        if args.json:
            print_json({"tasks": reply.tasks, "total": reply.total})
        elif not reply.tasks:
            print("no tasks")
        else:
            short = shortener(client, "task", (t.id for t in reply.tasks), args.full_ids)
            print_fitted(["ID", "PRI", "STATE", "PLAN", "HELD BY", "LEASE", "TRIES", "AGE", "TITLE"], [
                [short(t.id), str(t.priority), t.state, t.plan or "", t.claimed_by or "", _lease(t),
                 str(t.attempts), age(t.created_at), one_line(t.title, TITLE_COLUMN_CHARS)] for t in reply.tasks],
                TASK_TABLE_FITTING)
            if reply.total > len(reply.tasks):
                print(f"({len(reply.tasks)} of {reply.total}; --limit/--offset for more)")
        return 0
    if action == "show":
        reply = client.call("get-task", "task", task_id=args.task)
        if args.json:
            print_json({"task": reply.task, "events": reply.events, "reviews": reply.reviews,
                        "executions": reply.executions})
            return 0
        _print_task(reply.task)
        if reply.events:
            print("\nevents:")
            print_fitted(["AGO", "EVENT", "BY", "FROM", "TO", "DETAIL"], [
                [age(e.at), e.kind, e.actor or "", e.from_state or "", e.to_state or "",
                 one_line(" ".join(f"{k}={v}" for k, v in e.detail.items()), 60)] for e in reply.events],
                EVENT_TABLE_FITTING)
        if reply.executions:
            print("\nexecutions:")
            short = shortener(client, "execution", (e.id for e in reply.executions), args.full_ids)
            print_fitted(["ID", "AGENT", "STATUS", "KIND"], [[short(e.id), e.agent_name, e.status, e.kind]
                                                             for e in reply.executions], TASK_EXECUTION_TABLE_FITTING)
        return 0
    if action in ("approve", "reject", "comment"):
        reply = client.call("review-task", "task", task_id=args.task, verdict=action, comment=args.comment,
                            final=getattr(args, "final", False), blocking=getattr(args, "blocking", False))
        print_json(reply.task) if args.json else print(f"{reply.task.id} {reply.task.state}")
        return 0
    reply = client.call("dispatch-tasks", "dispatch", target=args.target, plan=getattr(args, "plan", None),
                        stop=action == "stop")
    short = shortener(client, "task", (d.task_id for d in reply.dispatchers))
    for d in reply.dispatchers:
        print(f"{d.pane_id} plan={d.plan or '*'} as {d.principal}: task {short(d.task_id) or '-'}, "
              f"{d.completed} done, {d.released} released" + (" (stopping)" if d.stopping else ""))
    if action == "stop" and not any(d.pane_id for d in reply.dispatchers):
        print("no dispatchers")
    return 0


def _configure_knowledge(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="knowledge_action", metavar="ACTION", required=True)
    search = actions.add_parser("search", help="what earlier tasks learned, most relevant first")
    search.add_argument("query")
    search.add_argument("-n", "--limit", type=int, default=10)
    search.add_argument("--min-score", type=float, default=0.0)
    add_full_ids_option(search)
    search.add_argument("--json", action="store_true")


@cli_command("knowledge")(_configure_knowledge)
def knowledge(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("search-knowledge", "knowledge-list", query=args.query, limit=args.limit,
                        min_score=args.min_score)
    if args.json:
        print_json({"entries": reply.entries})
    elif not reply.entries:
        print("nothing found")
    else:
        short = shortener(client, "task", (e.source_task_id for e in reply.entries), args.full_ids)
        print_fitted(["SCORE", "TASK", "TITLE", "CONTENT"], [
            [f"{e.score:.2f}" if e.score is not None else "", short(e.source_task_id),
             one_line(e.title, 30), one_line(e.content, 70)] for e in reply.entries], KNOWLEDGE_TABLE_FITTING)
    return 0
