"""`Execution`: one unit of work in a pane, as the history keeps it. One definition behind the
store, the protocol, the CLI and the MCP tools (which render times as ISO 8601)."""

from __future__ import annotations

import secrets
import time
from typing import Literal

import msgspec

Status = Literal["pending", "running", "success", "failed", "cancelled", "timeout", "interrupted"]
STATUSES: tuple[Status, ...] = ("pending", "running", "success", "failed", "cancelled", "timeout",
                                "interrupted")
ACTIVE_STATUSES: frozenset[str] = frozenset({"pending", "running"})
ENDED_STATUSES: frozenset[str] = frozenset(STATUSES) - ACTIVE_STATUSES
# "Failed", everywhere the history counts or filters: ended without success and not by a cancel
# (a caller's, or a killed pane's). A timeout and an interruption (the daemon stopped, another
# command took the shell) are failures too; each row keeps its exact status. Stats count these,
# `status=failed` selects these, failure reports list these.
FAILED_STATUSES: tuple[Status, ...] = ("failed", "timeout", "interrupted")
TriggeredBy = Literal["manual", "schedule", "agent", "mcp", "cli", "web"]
TRIGGERS: tuple[TriggeredBy, ...] = ("manual", "schedule", "agent", "mcp", "cli", "web")
Kind = Literal["prompt", "command"]
KINDS: tuple[Kind, ...] = ("prompt", "command")  # an agent's turn; a command line (muxd run, a shell)
# Where a field's value came from: the agent's own session log and its hooks are exact, the
# screen is read.
Source = Literal["session_log", "screen", "process", "request", "hook"]
# Whose dollar figure `cost_usd` is: the agent's own (shown on its screen), or muxd's estimate
# from the session log's exact token counts and a price table (muxd/executions/pricing.py).
CostSource = Literal["agent", "estimate"]
COST_DECIMALS = 6  # dollars are kept to a millionth: below any call's price, above float noise


class ExecutionError(msgspec.Struct, frozen=True, kw_only=True):
    type: str            # "api_error", "rate_limited", "exit_status", "pane_exited", "no_agent", "timeout", …
    message: str         # one line, the agent's (or program's) own words
    stack_hash: str      # fingerprint.stack_hash(type, message): equal for "the same" failure


class Execution(msgspec.Struct, frozen=True, kw_only=True):
    id: str                              # exec_{ms since epoch}_{8 hex}
    pane_id: str                         # %N, in the daemon run `pane_key` names
    pane_key: str                        # "{daemon run id}/%N": unique across restarts
    agent_name: str                      # the pane's name, else its id
    agent_type: str | None = None        # claude, codex, gemini, aider, opencode, shell, None
    kind: Kind = "prompt"
    status: Status = "pending"
    triggered_by: TriggeredBy = "manual"
    principal: str | None = None         # who triggered it ("system", "token:ci", "agent:%3")
    message: str | None = None           # the prompt, or the command line
    response: str | None = None          # the agent's answer in this turn, ANSI-free
    error: ExecutionError | None = None
    exit_code: int | None = None         # commands
    queued_at: float | None = None       # epoch seconds
    started_at: float | None = None
    completed_at: float | None = None
    duration_ms: int | None = None
    timeout_s: float | None = None
    tokens_used: int | None = None       # during this execution (a delta)
    cost_usd: float | None = None        # None: unknown (never a guess), not zero
    cost_source: CostSource | None = None
    cost_model: str | None = None        # estimates: the model priced, as the agent's log names it
    cost_price_date: str | None = None   # estimates: the ISO date whose prices were applied
    context_used: int | None = None
    context_max: int | None = None
    session_id: str | None = None        # the agent's own session id
    tool_calls: list[str] = []           # "Bash(mkdir -p demo)", as the screen or log shows it
    files_written: list[str] = []        # from Write/Edit tools
    task_id: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    attempt: int | None = None
    idempotency_key: str | None = None
    sources: dict[str, Source] = {}      # field name -> where its value came from
    transcript_bytes: int = 0            # bytes kept (after the cap): output, or an agent turn's rows as text
    transcript_truncated: bool = False   # the cap was reached: the start is kept, the rest not
    host: str | None = None              # the daemon's host that ran it (MUXD_HOST); None until stored


def statuses_selected(status: str | None) -> tuple[str, ...]:
    """The exact statuses a `status` filter selects: "failed" is the whole failure family
    (FAILED_STATUSES), any other status itself; () for no filter."""
    if status is None:
        return ()
    return FAILED_STATUSES if status == "failed" else (status,)


def new_execution_id(now: float | None = None) -> str:
    """exec_{milliseconds since the epoch}_{8 random hex digits} (seed 004 FR-004.1)."""
    millis = int((time.time() if now is None else now) * 1000)
    return f"exec_{millis}_{secrets.token_hex(4)}"


def finished(execution: Execution, status: Status, now: float, **fields: object) -> Execution:
    """`execution` ended with `status` at `now` (duration from its start; a pending one never started)."""
    started = execution.started_at
    duration = None if started is None else max(0, int(round((now - started) * 1000)))
    return msgspec.structs.replace(execution, status=status, completed_at=now, duration_ms=duration,
                                   **fields)  # type: ignore[arg-type]
