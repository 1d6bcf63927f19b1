"""The daemon's side of the agents' session logs: which file each agent process writes, found
from /proc once and remembered (finding it walks every process on the machine), marked when an
execution starts and read when it ends. Every method runs on the one thread of `SessionLogs`."""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path

from muxd.config import SESSION_LOG_MISSES_MAX, SESSION_LOG_SETTLE_S
from muxd.executions.session_logs import PARSERS, SessionLogCursor, TurnFacts, locate

_POLL_S = 0.05  # the CLI writes a turn's last lines just after it redraws its prompt


class SessionLogs:
    def __init__(self) -> None:
        self.thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="muxd-logs")
        self._paths: dict[int, Path] = {}   # agent pid -> the log it writes
        self._misses: dict[int, int] = {}   # agent pid -> looks that found none

    def _find(self, agent_type: str, pid: int) -> Path | None:
        if self._misses.get(pid, 0) >= SESSION_LOG_MISSES_MAX:
            return None  # a CLI that keeps no log (or not where muxd looks): stop walking /proc for it
        path = locate(agent_type, pid)
        if path is None:
            self._misses[pid] = self._misses.get(pid, 0) + 1
            return None
        self._paths[pid], self._misses[pid] = path, 0
        return path

    def mark(self, agent_type: str | None, pid: int | None, at_end: bool = True) -> SessionLogCursor | None:
        """A cursor on the agent's log at its end now (`at_end=False`: a turn whose prompt is
        already written, read as the log's last turn)."""
        if agent_type not in PARSERS or pid is None:
            return None
        path = self._paths.get(pid) or self._find(agent_type, pid)
        if path is None:
            return None  # not written yet: Claude Code starts its log at the first prompt
        cursor = SessionLogCursor(path, agent_type)
        if at_end:
            cursor.mark()
        return cursor

    def read(self, agent_type: str | None, pid: int | None, marked: SessionLogCursor | None) -> TurnFacts | None:
        """What the log says of the turn since `marked`; a log new since (the first prompt
        created it, `/clear` started another) is read whole. Waits up to SESSION_LOG_SETTLE_S
        for the turn to be complete there."""
        if agent_type not in PARSERS or pid is None:
            return None
        cursor = marked
        if cursor is None or not cursor.grew():
            path = self._find(agent_type, pid)  # the known one did not grow: another may have
            if path is None:
                return None
            if cursor is None or cursor.path != path:
                cursor = SessionLogCursor(path, agent_type)
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
        self.thread.shutdown(wait=False, cancel_futures=True)
