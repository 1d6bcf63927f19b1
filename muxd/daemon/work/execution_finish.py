"""Completing an ended execution: what the screen showed during it (taken at once, on the loop,
before the screen moves on) and what needs I/O (the agent's session log, read on a thread),
merged into the record with the source of each field. The log wins where both say something;
a log that cannot be read within SESSION_LOG_BUDGET_S, or at all, leaves the screen's facts.
Where the agent showed no cost of its own, the log's token counts are priced (an estimate)."""

from __future__ import annotations

import asyncio
import logging
import re
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import msgspec

from muxd.config import SESSION_LOG_BUDGET_S
from muxd.daemon.work.pane_run import PaneRun
from muxd.daemon.work.session_log_finder import SessionLogs
from muxd.executions.record import Execution, Source
from muxd.executions.tracker import MUXD_FAILURE_TYPES, turn_error

if TYPE_CHECKING:
    from muxd.daemon.panes.detection import PaneDetection
    from muxd.executions.pricing import CostEstimate
    from muxd.executions.session_logs import SessionLogCursor, TurnFacts

log = logging.getLogger(__name__)
T = TypeVar("T")

# Tools whose argument is a file they write (Claude Code's names; Codex reports edits as Edit).
FILE_WRITING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Update", "Create"})
_CALL = re.compile(r"^(?P<name>[A-Za-z][\w.-]*)\((?P<arg>.*)\)\s*$")
TOOL_CALLS_KEPT = 100


@dataclass
class TurnSnapshot:
    """What the pane showed of one execution when it ended."""

    lines: list[str] = field(default_factory=list)   # rows from its first to the bottom, wraps joined
    tool_calls: list[str] = field(default_factory=list)
    tools_source: Source = "screen"   # "hook" when the agent's hooks reported the tools
    hook_answer: str | None = None    # the turn's last words as its Stop hook gave them
    agent_type: str | None = None
    pid: int | None = None
    marked_log: Future[SessionLogCursor | None] | None = None  # the log as it was when the execution began
    # `lines` read already (at the turn's end, with the transcript): the answer they give and
    # the row the turn's own rows start at (its prompt's echo; 0: not found, a screen above).
    read: bool = False
    screen_answer: str | None = None
    turn_from: int = 0


def turn_rows(run: PaneRun) -> list[str]:
    """The pane's rows, soft wraps joined, from a screen above where the running turn began: a
    full-screen CLI draws the prompt's echo above its input box, where the cursor was; the
    answer readers find the last echo themselves."""
    emulator = run.pane.emulator
    start = max(run.start_row - emulator.lines - emulator.rows_scrolled, -emulator.history_size)
    return emulator.text_lines(start)


def snapshot(run: PaneRun, execution: Execution, detection: PaneDetection | None, *,
             rows_read: bool = False) -> TurnSnapshot:
    """The screen's part of `execution` (a prompt's turn), read now; `detection` is the pane's
    detector (the tool calls it saw), None if detection is off. With `rows_read` the rows are
    read and the turn found in them whatever the hooks said (its transcript is made of them)."""
    if execution.kind != "prompt":
        return TurnSnapshot()
    pane = run.pane
    calls: list[str] = []
    tools_source: Source = "screen"
    hook_answer = None
    if detection is not None:
        runner = detection.runner
        new = min(runner.tools_counted - run.tools_at_start, len(runner.tool_uses), TOOL_CALLS_KEPT)
        calls = [sighting.signature for sighting in list(runner.tool_uses)[len(runner.tool_uses) - new:]] if new > 0 else []
        if runner.hooks is not None:
            tools_source = "hook"
            told = runner.hooks.fact("answer")
            if told is not None and told[1].observed_at >= (execution.started_at or 0.0):
                hook_answer = str(told[0])
    # Without a transcript to make of them, the screen's rows are read for the answer only,
    # which the agent's own words replace: with those, the capture is not made.
    lines = turn_rows(run) if hook_answer is None or rows_read else []
    shot = TurnSnapshot(lines=lines, tool_calls=calls, tools_source=tools_source, hook_answer=hook_answer,
                        agent_type=pane.agent.agent_type, pid=run.agent_pid or pane.pid, marked_log=run.session_log)
    if rows_read:
        from muxd.executions.answers import read_turn  # the CLIs' readers: at the first ended turn, not at start

        echo, shot.screen_answer = read_turn(shot.agent_type, lines, execution.message)
        shot.read, shot.turn_from = True, echo or 0
    return shot


def files_written(tool_calls: list[str]) -> list[str]:
    """The files that Write/Edit-like calls name, in order, each once."""
    found: list[str] = []
    for call in tool_calls:
        match = _CALL.match(call)
        if match and match.group("name") in FILE_WRITING_TOOLS:
            path = match.group("arg").strip()
            if path and path not in found:
                found.append(path)
    return found


def finalized_at_once(execution: Execution, shot: TurnSnapshot, logs: SessionLogs) -> Execution | None:
    """`finalize`'s result where nothing is to be waited for: an agent found to keep no log (most
    turns of such a fleet), or no prompt's turn. None: `finalize` then (a log to read, a cost to
    price, on threads)."""
    if execution.kind != "prompt":
        return execution
    mark = shot.marked_log
    if mark is not None and not (mark.done() and mark.exception() is None and mark.result() is None):
        return None  # a log marked, or its mark not known yet
    if not logs.keeps_none(shot.pid):
        return None
    return _completed(execution, shot, None)


async def finalize(execution: Execution, shot: TurnSnapshot, logs: SessionLogs) -> Execution:
    """`execution` completed with what the snapshot and the agent's log (where it keeps one) say."""
    if execution.kind != "prompt":
        return execution
    try:
        reading = _read_now(execution.pane_id, shot, logs)
        if reading is not None and reading.done():  # no task, timer or trip through the loop
            facts = reading.result()
        else:
            facts = await asyncio.wait_for(_result(reading) if reading is not None
                                           else _log_facts(execution.pane_id, shot, logs), SESSION_LOG_BUDGET_S)
    except Exception as exc:  # TimeoutError: past the budget, or the pane's earlier read has not ended
        log.warning("execution %s: pane %s's session log not read (%s); the screen's facts are kept",
                    execution.id, execution.pane_id, str(exc) or f"not within {SESSION_LOG_BUDGET_S:.0f} s")
        facts = None
    estimate = None
    if facts is not None and execution.cost_usd is None and facts.call_tokens:  # the agent showed no figure of its own
        from muxd.executions.pricing import estimate_cost  # with the session logs' parsers: not at start

        # On a thread: the price table's first load takes a few hundred ms.
        estimate = await asyncio.to_thread(estimate_cost, facts.model, facts.call_tokens,
                                           execution.started_at or execution.completed_at or 0.0)
    return _completed(execution, shot, facts, estimate)


def _completed(execution: Execution, shot: TurnSnapshot, facts: TurnFacts | None,
               estimate: CostEstimate | None = None) -> Execution:
    """`execution` with the snapshot's facts, the log's over them, and the log's priced cost."""
    sources = dict(execution.sources)
    fields: dict[str, object] = {}
    if shot.agent_type and execution.agent_type is None:
        fields["agent_type"] = shot.agent_type
    if shot.read:
        answer = shot.screen_answer
    else:
        from muxd.executions.answers import extract_answer  # the CLIs' readers: at the first ended turn, not at start

        answer = extract_answer(shot.agent_type, shot.lines, execution.message) if shot.lines else None
    if shot.hook_answer:  # the agent's own words, over the screen's reading of them
        fields["response"], sources["response"] = shot.hook_answer, "hook"
    elif answer:
        fields["response"], sources["response"] = answer, "screen"
    if shot.tool_calls:
        fields["tool_calls"] = shot.tool_calls
        fields["files_written"] = files_written(shot.tool_calls)
        sources["tool_calls"] = sources["files_written"] = shot.tools_source
    if facts is not None:
        _from_log(execution, facts, fields, sources)
    if estimate is not None:
        fields.update(cost_usd=estimate.cost_usd, cost_source="estimate", cost_model=estimate.model,
                      cost_price_date=estimate.price_date)
        sources["cost_usd"] = "session_log"
    fields["sources"] = sources
    return msgspec.structs.replace(execution, **fields)  # type: ignore[arg-type]


def _read_now(pane_id: str, shot: TurnSnapshot, logs: SessionLogs) -> Future[TurnFacts | None] | None:
    """The read of the turn in the agent's log, begun now if its mark is known (None: it is
    not yet); done at once for an agent found to keep no log (most turns of such a fleet)."""
    mark = shot.marked_log
    if mark is not None and not mark.done():
        return None
    marked = mark.result() if mark is not None and mark.exception() is None else None
    return logs.read_soon(pane_id, shot.agent_type, shot.pid, marked)


async def _log_facts(pane_id: str, shot: TurnSnapshot, logs: SessionLogs) -> TurnFacts | None:
    """What the agent's log says of the turn, read on the pane's lane after its mark."""
    marked = None
    if shot.marked_log is not None:
        try:
            marked = await _result(shot.marked_log)
        except Exception:  # a log that vanished or cannot be read: looked for again
            marked = None
    return await _result(logs.read_soon(pane_id, shot.agent_type, shot.pid, marked))


async def _result(future: Future[T]) -> T:
    """`future`'s result; one done already (an agent known to keep no log) takes no trip
    through the loop's wake-up pipe."""
    return future.result() if future.done() else await asyncio.wrap_future(future)


def _from_log(execution: Execution, facts: TurnFacts, fields: dict[str, object], sources: dict[str, str]) -> None:
    taken = {"response": facts.response, "tokens_used": facts.tokens_used, "session_id": facts.session_id,
             "context_used": facts.context_used, "context_max": facts.context_max,
             "tool_calls": facts.tool_calls or None, "files_written": facts.files_written or None}
    if execution.message is None and facts.prompt:
        taken["message"] = facts.prompt  # a person's prompt the input box did not show in time
    for name, value in taken.items():
        if value is not None:
            fields[name] = value
            sources[name] = "session_log"
    told_by_agent = execution.error is not None and execution.error.type not in MUXD_FAILURE_TYPES
    if facts.error is not None and facts.complete and (
            execution.status == "success" or execution.status == "failed" and told_by_agent):
        # The log says the turn ended on an API error the screen did not show long enough; or
        # the screen or a hook told it, and the log's record of the API's own words is fuller.
        fields["status"] = "failed"
        fields["error"] = turn_error(facts.error.type, facts.error.message)
        sources["error"] = "session_log"
