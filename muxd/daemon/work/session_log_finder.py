"""The daemon's side of the agents' session logs: which file each agent process writes, found
from /proc once and remembered (finding it walks every process on the machine), marked when an
execution starts and read when it ends. The work runs on `lanes`: one job at a time per pane
(so a pane's mark comes before its read, and its facts are only ever touched by one thread),
a few panes at once (so one pane's log never delays another's)."""

from __future__ import annotations

import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from muxd.config import (SESSION_LOG_BUDGET_S, SESSION_LOG_MISSES_MAX, SESSION_LOG_READER_THREADS,
                         SESSION_LOG_SETTLE_S)
from muxd.daemon.panes.pane_lanes import PaneLanes

_POLL_S = 0.05  # the CLI writes a turn's last lines just after it redraws its prompt

if TYPE_CHECKING:
    from muxd.executions.session_logs import SessionLogCursor, TurnFacts
    from muxd.executions.session_logs.store_cursor import SessionStoreCursor


class SessionLogs:
    def __init__(self) -> None:
        self.lanes = PaneLanes(SESSION_LOG_READER_THREADS, SESSION_LOG_BUDGET_S, "muxd-logs")
        # Keyed by agent pid, each only ever used from its pane's lane.
        self._paths: dict[int, Path] = {}   # agent pid -> the log it writes
        self._misses: dict[int, int] = {}   # agent pid -> looks that found none

    def mark_soon(self, pane_id: str, agent_type: str | None, pid: int | None,
                  at_end: bool = True) -> Future[SessionLogCursor | SessionStoreCursor | None]:
        """`mark` on the pane's lane."""
        if self.keeps_none(pid):
            return _none()
        return self.lanes.submit(pane_id, self.mark, agent_type, pid, at_end)

    def read_soon(self, pane_id: str, agent_type: str | None, pid: int | None,
                  marked: SessionLogCursor | SessionStoreCursor | None) -> Future[TurnFacts | None]:
        """`read` on the pane's lane."""
        if marked is None and self.keeps_none(pid):
            return _none()
        return self.lanes.submit(pane_id, self.read, agent_type, pid, marked)

    def keeps_none(self, pid: int | None) -> bool:
        """Whether `pid`'s log was looked for in vain often enough that `mark` and `read` find
        nothing without looking (asked on the loop: a count that only grows, until `forget`,
        so no lane's work is needed, nor a trip to a thread and back)."""
        return pid is not None and self._misses.get(pid, 0) >= SESSION_LOG_MISSES_MAX

    def _find(self, agent_type: str, pid: int) -> Path | None:
        from muxd.executions.session_logs import locate  # the parsers: at the first agent turn, on a lane

        if self._misses.get(pid, 0) >= SESSION_LOG_MISSES_MAX:
            return None  # a CLI that keeps no log (or not where muxd looks): stop walking /proc for it
        path = locate(agent_type, pid)
        if path is None:
            self._misses[pid] = self._misses.get(pid, 0) + 1
            return None
        self._paths[pid], self._misses[pid] = path, 0
        return path

    def mark(self, agent_type: str | None, pid: int | None,
             at_end: bool = True) -> SessionLogCursor | SessionStoreCursor | None:
        """A cursor on the agent's log at its end now (`at_end=False`: a turn whose prompt is
        already written, read as the log's last turn)."""
        from muxd.executions.session_logs.store_cursor import READ_AGENTS  # as _find

        if agent_type not in READ_AGENTS or pid is None:
            return None
        path = self._paths.get(pid) or self._find(agent_type, pid)
        if path is None:
            return None  # not written yet: Claude Code starts its log at the first prompt
        cursor = _cursor(path, agent_type, pid)
        if at_end:
            cursor.mark()
        return cursor

    def read(self, agent_type: str | None, pid: int | None,
             marked: SessionLogCursor | SessionStoreCursor | None) -> TurnFacts | None:
        """What the log says of the turn since `marked`; a log new since (the first prompt
        created it, `/clear` started another) is read whole. Waits up to SESSION_LOG_SETTLE_S
        for the turn to be complete there."""
        from muxd.executions.session_logs.store_cursor import READ_AGENTS  # as _find

        if agent_type not in READ_AGENTS or pid is None:
            return None
        cursor = marked
        if cursor is None or not cursor.grew():
            path = self._find(agent_type, pid)  # the known one did not grow: another may have
            if path is None:
                return None
            if cursor is None or cursor.path != path:
                cursor = _cursor(path, agent_type, pid)
        deadline = time.monotonic() + SESSION_LOG_SETTLE_S
        while True:
            facts = cursor.read_turn()
            if facts.complete or time.monotonic() >= deadline:
                return facts if facts.api_calls or facts.response or facts.error else None
            time.sleep(_POLL_S)

    def forget(self, pid: int | None) -> None:
        if pid is not None:
            self._paths.pop(pid, None)
            self._misses.pop(pid, None)

    def close(self) -> None:
        self.lanes.close()


def _cursor(path: Path, agent_type: str, pid: int) -> SessionLogCursor | SessionStoreCursor:
    """A cursor on `path` for the agent running as `pid` (a store's scoped to its cwd)."""
    from muxd.executions.session_logs.locate import agent_cwd, process_owner
    from muxd.executions.session_logs.store_cursor import STORE_AGENTS, cursor_for

    scope = agent_cwd(agent_type, pid) if agent_type in STORE_AGENTS else None
    return cursor_for(path, agent_type, process_owner(pid), scope)


def _none() -> Future[None]:
    """The answer "no log" (a done future: its readers only look, nobody adds callbacks or sets it)."""
    return _NO_LOG


_NO_LOG: Future[None] = Future()  # one for all: a Future is a lock and a condition to build, per execution twice
_NO_LOG.set_result(None)
