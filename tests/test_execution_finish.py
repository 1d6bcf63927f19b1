"""finalize(): an ended execution waits at most SESSION_LOG_BUDGET_S for its pane's session log;
a pane whose log read hangs (a file on a hung mount) ends its executions with what the screen
showed, and another pane's log is read meanwhile."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from muxd.config import SESSION_LOG_MISSES_MAX
from muxd.daemon.work import execution_finish
from muxd.daemon.work.execution_finish import TurnSnapshot
from muxd.daemon.work.session_log_finder import SessionLogs
from muxd.executions.record import Execution, new_execution_id
from muxd.executions.session_logs import SessionLogCursor

BUDGET_S = 0.5
ANSWER = "Sure! Here is a slowly streamed answer."
SCREEN = ["> hello", "", ANSWER, "", "Tokens: 732 sent, 49 received.", "─" * 80, "notes.txt", "> "]


@pytest.fixture
def logs(monkeypatch) -> Iterator[SessionLogs]:
    monkeypatch.setattr(execution_finish, "SESSION_LOG_BUDGET_S", BUDGET_S)
    logs = SessionLogs()
    yield logs
    logs.close()


def ended(pane_id: str) -> Execution:
    now = time.time()
    return Execution(id=new_execution_id(), pane_id=pane_id, pane_key=f"r/{pane_id}", agent_name=pane_id,
                     agent_type="aider", status="success", started_at=now - 3, completed_at=now, message="hello")


def test_a_hung_log_read_ends_the_execution_from_the_screen_within_the_budget(logs, tmp_path):
    released = threading.Event()
    try:
        logs.lanes.submit("%1", released.wait)  # the pane's earlier log job, stuck
        since = time.monotonic()
        done = asyncio.run(execution_finish.finalize(ended("%1"), TurnSnapshot(lines=SCREEN, agent_type="aider",
                                                                                 pid=os.getpid()), logs))
        assert time.monotonic() - since < BUDGET_S * 10
        assert done.response == ANSWER and done.sources["response"] == "screen"
    finally:
        released.set()


def test_another_panes_log_is_read_while_one_hangs(logs, tmp_path):
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(f"#### hello  \n\n{ANSWER} (from the log)\n\n> Tokens: 732 sent, 49 received.  \n\n")
    released = threading.Event()

    async def finish_other() -> Execution:
        marked = logs.lanes.submit("%2", lambda: SessionLogCursor(history, "aider"))
        return await execution_finish.finalize(ended("%2"), TurnSnapshot(lines=SCREEN, agent_type="aider",
                                                                          pid=os.getpid(), marked_log=marked), logs)
    try:
        logs.lanes.submit("%1", released.wait)
        done = asyncio.run(finish_other())
        assert done.response == f"{ANSWER} (from the log)" and done.sources["response"] == "session_log"
    finally:
        released.set()


def test_the_hooks_answer_and_tools_are_the_turns_where_no_log_tells(logs):
    """No session log for the pane (none found): the Stop hook's last words over the screen's
    reading of them, and the tools the hooks reported, each with its source."""
    shot = TurnSnapshot(lines=SCREEN, agent_type="aider", pid=None, hook_answer="The hook's own words.",
                        tool_calls=["Bash(make)"], tools_source="hook")
    done = asyncio.run(execution_finish.finalize(ended("%3"), shot, logs))
    assert (done.response, done.sources["response"]) == ("The hook's own words.", "hook")
    assert (done.tool_calls, done.sources["tool_calls"]) == (["Bash(make)"], "hook")


def test_a_turn_of_an_agent_that_keeps_no_log_is_completed_at_once_as_finalize_would(logs):
    """An agent process whose log was looked for in vain: its turns are completed on the spot
    (no task, no trip through a thread), with what finalize gives; one whose log may still be
    found, or whose mark is being taken, waits for finalize."""
    pid = os.getpid()
    shot = TurnSnapshot(lines=SCREEN, agent_type="aider", pid=pid, tool_calls=["Edit(notes.txt)"])
    execution = ended("%4")
    assert execution_finish.finalized_at_once(execution, shot, logs) is None  # not looked for yet
    for _ in range(SESSION_LOG_MISSES_MAX):
        assert logs.mark_soon("%4", "aider", pid).result(timeout=10) is None  # looked for, not found
    at_once = execution_finish.finalized_at_once(execution, shot, logs)
    assert at_once is not None and at_once == asyncio.run(execution_finish.finalize(execution, shot, logs))
    assert (at_once.response, at_once.sources["response"]) == (ANSWER, "screen")
    assert at_once.files_written == ["notes.txt"] and at_once.sources["files_written"] == "screen"
    marking: Future[None] = Future()  # its mark not taken yet
    assert execution_finish.finalized_at_once(execution, TurnSnapshot(lines=SCREEN, agent_type="aider", pid=pid,
                                                                      marked_log=marking), logs) is None
