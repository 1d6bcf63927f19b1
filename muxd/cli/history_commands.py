"""CLI commands of the execution history: submit, history, show, failures, stats, cancel.
Tables for people, fitted to the terminal and with short ids (cli/short_ids.py); `--json` for
scripts (the records the protocol carries)."""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from muxd.cli.render import (
    age, duration, one_line, print_fields, print_fitted, print_json, print_line, tokens,
)
from muxd.cli.short_ids import add_full_ids_option, shortener
from muxd.cli.table import cli_command
from muxd.errors import BadRequest
from muxd.executions.record import STATUSES, TRIGGERS, Execution

if TYPE_CHECKING:
    from muxd.store.execution_store import AgentStats

_AGO = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MESSAGE_COLUMN_CHARS = 48
SHOW_OUTPUT_LINES = 20  # of a command's output, under `muxd show` (--transcript: all of it)
ID_HELP = "an execution id, or its short id as `muxd history` shows it"
# On a terminal too narrow for every column, the steps that fit a table of executions
# (render.fit_table): what is left says which run, how it ended, when, and what it was asked.
EXECUTION_TABLE_FITTING = (
    ("drop", "COST"), ("drop", "TOKENS"), ("drop", "BY"), ("drop", "TOOK"), ("cut", "AGENT"), ("cut", "MESSAGE"),
    ("cut", "ERROR"), ("drop", "ERROR"), ("drop", "AGENT"), ("drop", "AGO"),
)
PATTERN_TABLE_FITTING = (
    ("drop", "FIRST"), ("cut", "MESSAGE"), ("cut", "TYPE"), ("drop", "LAST"), ("drop", "TYPE"), ("drop", "COUNT"),
)
STATS_TABLE_FITTING = (
    ("drop", "COST"), ("drop", "TOKENS"), ("drop", "AVG"), ("drop", "RUNNING"), ("drop", "KIND"), ("drop", "OK"),
    ("cut", "NOW"), ("cut", "AGENT"), ("drop", "NOW"),
)

HOST_HELP = "only what one daemon's host ran (its MUXD_HOST; default: every host sharing the database)"


def since_time(text: str | None) -> float | None:
    """`--since`: an age (90s, 30m, 2h, 7d) or an ISO 8601 time."""
    if text is None:
        return None
    match = _AGO.match(text.strip())
    if match:
        return time.time() - float(match.group(1)) * _UNIT_S[match.group(2)]
    from muxd.mcp_server.execution_views import parse_iso

    return parse_iso("--since", text)


def took(e: Execution) -> str:
    if e.duration_ms is not None:
        return f"{e.duration_ms / 1000:.1f}s"
    return duration(time.time() - e.started_at) + "…" if e.started_at else ""


def _rows(executions: list[Execution], short: Callable[[str | None], str]) -> list[list[str]]:
    return [[short(e.id), e.agent_name, e.status, e.triggered_by, age(e.started_at or e.queued_at or time.time()),
             took(e), tokens(e.tokens_used), cost_text(e),
             e.error.type if e.error else "", one_line(e.message, MESSAGE_COLUMN_CHARS)] for e in executions]


def cost_text(e: Execution) -> str:
    """`$0.0123`, `~$0.0123` for muxd's estimate, "" when unknown."""
    if e.cost_usd is None:
        return ""
    return ("~" if e.cost_source == "estimate" else "") + f"${e.cost_usd:.4f}"


def cost_detail(e: Execution) -> str:
    if e.cost_usd is None:
        return ""
    if e.cost_source == "estimate":
        return f"${e.cost_usd:.6f} (estimate: {e.cost_model} at the prices of {e.cost_price_date})"
    return f"${e.cost_usd:.6f}" + (f" ({e.cost_source})" if e.cost_source else "")


def _cost_total(s: AgentStats) -> str:
    """The known costs' sum, and over how many of the runs when not all: unknown is not zero."""
    if s.total_cost_usd is None:
        return ""
    covered = "" if s.cost_known_executions == s.total else f" ({s.cost_known_executions}/{s.total})"
    return f"${s.total_cost_usd:.4f}{covered}"


def print_executions(executions: list[Execution], short: Callable[[str | None], str],
                     total: int | None = None) -> None:
    if not executions:
        print("no executions")
        return
    print_fitted(["ID", "AGENT", "STATUS", "BY", "AGO", "TOOK", "TOKENS", "COST", "ERROR", "MESSAGE"],
                 _rows(executions, short), EXECUTION_TABLE_FITTING)
    if total is not None and total > len(executions):
        print(f"({len(executions)} of {total}; --limit/--offset for more)")


def print_execution(e: Execution, transcript: str | None) -> None:
    rows = [["id", e.id], ["agent", f"{e.agent_name} ({e.pane_id}, {e.agent_type or 'no agent'})"],
            ["kind", e.kind], ["status", e.status], ["triggered by", f"{e.triggered_by} ({e.principal or '-'})"],
            ["message", e.message or ""], ["started", when_text(e.started_at)], ["completed", when_text(e.completed_at)],
            ["took", took(e)], ["exit code", "" if e.exit_code is None else str(e.exit_code)],
            ["tokens", "" if e.tokens_used is None else str(e.tokens_used)],
            ["cost", cost_detail(e)],
            ["session", e.session_id or ""], ["tools", ", ".join(e.tool_calls)],
            ["files written", ", ".join(e.files_written)],
            ["error", f"{e.error.type}: {e.error.message} [{e.error.stack_hash}]" if e.error else ""],
            ["task", e.task_id or ""], ["trace", e.trace_id or ""], ["span", e.span_id or ""],
            ["attempt", "" if e.attempt is None else str(e.attempt)],
            ["sources", ", ".join(f"{k}: {v}" for k, v in sorted(e.sources.items()))],
            ["transcript", f"{e.transcript_bytes} bytes" + (" (truncated)" if e.transcript_truncated else "")]]
    print_fields(rows)
    if e.response:
        print("\nresponse:")
        for line in e.response.splitlines():
            print_line(f"  {line}")
    if transcript is not None:
        print("\ntranscript:")
        for line in transcript.splitlines():
            print_line(line)


def when_text(ts: float | None) -> str:
    return "" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _configure_submit(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", dest="target", required=True, help="the agent's pane")
    p.add_argument("message", help="the prompt")
    p.add_argument("--wait", action="store_true", help="wait for it to end and show the result")
    p.add_argument("--timeout", type=float, default=None, help="the execution's time limit in seconds")
    p.add_argument("--wait-timeout", type=float, default=300.0, help="how long --wait waits (default 300 s)")
    for name in ("task-id", "trace-id", "span-id"):
        p.add_argument(f"--{name}")
    p.add_argument("--idempotency-key", help="your second submit to this pane with this key prints the first "
                                             "execution instead (with another message: an error)")
    p.add_argument("--attempt", type=int)
    p.add_argument("--force", action="store_true", help="send it even where no agent runs: a shell there "
                                                        "runs it as a command")
    p.add_argument("--json", action="store_true")


@cli_command("submit")(_configure_submit)
def submit(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("submit", "execution", target=args.target, message=args.message,
                        triggered_by="cli", task_id=args.task_id, trace_id=args.trace_id, span_id=args.span_id,
                        attempt=args.attempt, idempotency_key=args.idempotency_key, timeout_s=args.timeout,
                        wait_s=args.wait_timeout if args.wait else 0.0, force=args.force)
    return _report(reply.execution, args, waited=args.wait)


def _report(e: Execution, args: argparse.Namespace, *, waited: bool) -> int:
    if args.json:
        print_json(e)
    elif waited:
        print_execution(e, None)
    else:
        print(f"{e.id} {e.status}")
    if not waited:
        return 0
    return 0 if e.status == "success" else 1


def _configure_history(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", help="one agent (a pane's name, else its %%id)")
    p.add_argument("--host", help=HOST_HELP)
    p.add_argument("--status", choices=STATUSES, help="failed: every failure (failed, timeout, interrupted)")
    p.add_argument("--by", dest="triggered_by", choices=TRIGGERS, help="who triggered it")
    p.add_argument("--since", help="an age (30m, 2h, 7d) or an ISO 8601 time (default: all)")
    p.add_argument("--trace", help="one trace id, or an execution's (short) id for its trace: every attempt "
                                   "of a task")
    p.add_argument("--task", help="one task id (or its short id, as `muxd task ls` shows it)")
    p.add_argument("--active", action="store_true", help="only what runs or waits now")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0)
    add_full_ids_option(p)
    p.add_argument("--json", action="store_true")


@cli_command("history")(_configure_history)
def history(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("list-executions", "execution-list", agent_name=args.agent, status=args.status,
                        triggered_by=args.triggered_by, since=since_time(args.since), trace_id=args.trace,
                        task_id=args.task, active=args.active, limit=args.limit, offset=args.offset, host=args.host)
    if args.json:
        print_json({"executions": reply.executions, "total": reply.total})
    else:
        short = shortener(client, "execution", (e.id for e in reply.executions), args.full_ids)
        print_executions(reply.executions, short, reply.total)
    return 0


def _configure_show(p: argparse.ArgumentParser) -> None:
    p.add_argument("execution_id", metavar="EXEC", help=ID_HELP)
    p.add_argument("--transcript", action="store_true", help="add the pane's output during it, as text")
    p.add_argument("--json", action="store_true")


@cli_command("show")(_configure_show)
def show(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("get-execution", "execution", execution_id=args.execution_id,
                        include_transcript=args.transcript)
    if args.json:
        print_json({"execution": reply.execution, "transcript": reply.transcript})
    else:
        print_execution(reply.execution, reply.transcript)
        e = reply.execution
        if reply.transcript is None and e.kind == "command" and e.transcript_bytes:
            _print_command_output(client, e.id)  # its window has closed: here is what it wrote
    return 0


def _print_command_output(client: Any, execution_id: str) -> None:
    from muxd.cli.run_command import output_tail

    lines, earlier = output_tail(client, execution_id, SHOW_OUTPUT_LINES)
    print(f"\noutput{f' (last {len(lines)} lines; --transcript for all)' if earlier else ''}:")
    for line in lines:
        print_line(line)


def _configure_failures(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unique", action="store_true", help="one failure per error pattern")
    p.add_argument("--agent")
    p.add_argument("--host", help=HOST_HELP)
    p.add_argument("--task", help="one task id (or its short id)")
    p.add_argument("--since", help="an age (30m, 2h, 7d) or an ISO 8601 time")
    p.add_argument("--limit", type=int, default=10)
    add_full_ids_option(p)
    p.add_argument("--json", action="store_true")


@cli_command("failures")(_configure_failures)
def failures(client: Any, args: argparse.Namespace) -> int:
    reply = client.call("execution-failures", "failure-report", agent_name=args.agent, task_id=args.task,
                        since=since_time(args.since), limit=args.limit, unique_errors=args.unique, host=args.host)
    if args.json:
        print_json({"failures": reply.failures, "error_patterns": reply.patterns})
        return 0
    if not reply.patterns:
        print("no failures")
        return 0
    short = shortener(client, "execution", [*(e.id for e in reply.failures), *(p.example_id for p in reply.patterns)],
                      args.full_ids)
    print_fitted(["PATTERN", "COUNT", "FIRST", "LAST", "TYPE", "MESSAGE", "EXAMPLE"],
                 [[p.stack_hash, str(p.count), age(p.first_seen), age(p.last_seen), p.error_type,
                   one_line(p.message, 60), short(p.example_id)] for p in reply.patterns], PATTERN_TABLE_FITTING,
                 title="error patterns")
    print_executions(reply.failures, short)
    return 0


def _configure_stats(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent")
    p.add_argument("--host", help=HOST_HELP)
    p.add_argument("--hours", type=float, default=24.0, help="look back this many hours (default 24)")
    p.add_argument("--json", action="store_true")


@cli_command("stats")(_configure_stats)
def stats(client: Any, args: argparse.Namespace) -> int:
    if not 0 < args.hours <= 24 * 365:
        raise BadRequest(f"--hours must be between 0 and {24 * 365}, got {args.hours:g}")
    reply = client.call("execution-stats", "execution-stats-reply", agent_name=args.agent,
                        since=time.time() - args.hours * 3600, host=args.host)
    if args.json:
        print_json({"agents": reply.agents, "live": reply.live, "recent_failures": reply.recent_failures})
        return 0
    live = {a.agent_name: a for a in reply.live}
    # Commands whose window has closed (every `muxd run` once it ended) fold into one row: a row
    # per run would bury the agents. --agent and --json still give each pane's.
    closed = [s for s in reply.agents if s.kind == "command" and s.agent_name not in live]
    shown = [s for s in reply.agents if s not in closed or len(closed) == 1]
    rows = []
    for s in shown:
        now = live.get(s.agent_name)
        rows.append([s.agent_name, s.kind, str(s.total), str(s.successful), str(s.failed), str(s.running),
                     f"{100 * s.successful / s.total:.1f}%" if s.total else "",
                     _cost_total(s), tokens(s.total_tokens) if s.total_tokens else "",
                     "" if s.avg_duration_s is None else f"{s.avg_duration_s:.1f}s",
                     (now.state + (f" +{now.queue_length} queued" if now.queue_length else "")) if now else "gone"])
    if len(closed) > 1:
        rows.append(_closed_commands_row(closed))
    if not rows:
        print(f"no executions in the last {args.hours:g} h")
        return 0
    print_fitted(["AGENT", "KIND", "RUNS", "OK", "FAILED", "RUNNING", "SUCCESS", "COST", "TOKENS", "AVG", "NOW"], rows,
                 STATS_TABLE_FITTING)
    return 0


def _closed_commands_row(closed: list[AgentStats]) -> list[str]:
    """One stats row for the commands of panes that are gone: their sums, the mean duration
    weighted by how many ended."""
    total, ok, failed = (sum(s.total for s in closed), sum(s.successful for s in closed),
                         sum(s.failed for s in closed))
    timed = [(s.avg_duration_s, s.successful + s.failed + s.cancelled) for s in closed if s.avg_duration_s is not None]
    weight = sum(n for _, n in timed)
    avg = sum(a * n for a, n in timed) / weight if weight else None
    all_tokens = sum(s.total_tokens for s in closed)
    return [f"{len(closed)} closed windows", "command", str(total), str(ok), str(failed),
            str(sum(s.running for s in closed)), f"{100 * ok / total:.1f}%" if total else "", "",
            tokens(all_tokens) if all_tokens else "", "" if avg is None else f"{avg:.1f}s", "gone"]


def _configure_cancel(p: argparse.ArgumentParser) -> None:
    p.add_argument("execution_id", metavar="EXEC", help=ID_HELP)
    p.add_argument("--json", action="store_true")


@cli_command("cancel")(_configure_cancel)
def cancel(client: Any, args: argparse.Namespace) -> int:
    e = client.call("cancel-execution", "execution", execution_id=args.execution_id).execution
    if args.json:
        print_json(e)
    else:
        print(f"{e.id} {e.status}")
    return 0
