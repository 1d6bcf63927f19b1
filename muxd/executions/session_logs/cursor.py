"""`SessionLogCursor`: follows one session log from the moment an execution starts, so that
only what the agent appended since is parsed. Every look opens the file as _open.py says (no
links, no FIFOs, the agent's own regular file); a parser that fails gives empty facts."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

import msgspec

from muxd.executions.session_logs import aider, claude, cline, codex, gemini, pi, qwen
from muxd.executions.session_logs._open import RefusedLog, open_log, read_at
from muxd.executions.session_logs.facts import TurnFacts
from muxd.executions.session_logs.locate import LAYOUT_PARTS, agent_of_log

log = logging.getLogger(__name__)

# At most this much of a turn is read; past it the turn's end is kept, its start dropped
# (the answer, the errors and the end of a turn matter more than a huge tool output's echo).
READ_MAX_BYTES = 8 * 1024 * 1024
# The first line of a log is looked at (this much of it) for the session id it names.
HEAD_MAX_BYTES = 64 * 1024
# `"sessionId": "<uuid>"` (Claude Code, Gemini CLI) or `"id": "<uuid>"` (Codex's session_meta).
_HEAD_SESSION_ID = re.compile(rb'"(?:sessionId|session_id|id)"\s*:\s*"([0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-'
                              rb'[0-9A-Fa-f]{12})"')

Parser = Callable[[bytes], TurnFacts]
PARSERS: dict[str, Parser] = {"claude": claude.parse_turn, "codex": codex.parse_turn,
                              "gemini": gemini.parse_turn, "aider": aider.parse_turn,
                              "qwen": qwen.parse_turn, "pi": pi.parse_turn, "cline": cline.parse_turn}
# Logs rewritten whole rather than appended to (Cline's messages file): a cursor's offset is a
# count of messages there, the turn is parsed from the whole file (`parse(data, since)`), and
# a file past READ_MAX_BYTES is not read (half a JSON document says nothing).
DocumentParser = Callable[[bytes, int], TurnFacts]
DOCUMENTS: dict[str, tuple[DocumentParser, Callable[[bytes], int | None]]] = {
    "cline": (cline.parse_turn, cline.message_count)}


class SessionLogCursor:
    """`mark()` when an execution starts; `read_turn()` whenever its facts are wanted (at the
    end, or while it runs: a partial last line is left for the next read).

    A CLI may create its log only at the first prompt (Claude Code does), or start a new one
    mid-session (`/clear`): a log that `locate` finds only at the end of an execution, or
    that differs from the one marked, is new, so it is read whole (a cursor never marked).

    `owner_uid`: the user the agent runs as (muxd's own by default); a log must be theirs."""

    def __init__(self, path: Path, agent_type: str | None = None, owner_uid: int | None = None) -> None:
        self.path = path
        agent = agent_type or agent_of_log(path)
        if agent not in PARSERS:
            raise ValueError(f"no session-log parser for {agent_type or path}")
        self.agent_type: str = agent
        self.owner_uid = os.getuid() if owner_uid is None else owner_uid
        self._parse = PARSERS[agent]
        self.offset = 0
        self._session_id: str | None = None
        self._refusal_told = False

    def mark(self) -> int:
        """Remember the log's current end as the start of the execution; returns that offset."""
        self.offset = (self._messages() if self.agent_type in DOCUMENTS else self._size()) or 0
        return self.offset

    def grew(self) -> bool:
        """Something was appended since `mark()` (False for a log gone, cut short or refused)."""
        size = self._messages() if self.agent_type in DOCUMENTS else self._size()
        return size is not None and size > self.offset

    def read_turn(self) -> TurnFacts:
        """The facts of what was appended since `mark()` (empty facts if the log is gone, is
        not one muxd reads, or its parser failed)."""
        fd = self._open()
        if fd is None:
            return TurnFacts()
        document = DOCUMENTS.get(self.agent_type)
        try:
            data = self._read_whole(fd) if document else self._read_since_mark(fd)
            session_id = None if document else self._head_session_id(fd)
        except OSError:
            return TurnFacts()
        finally:
            os.close(fd)
        try:
            facts = document[0](data, self.offset) if document else self._parse(data)
        except Exception:  # a line of a shape no release wrote: what the screen showed is kept
            log.exception("session log %s: its %s parser failed; the screen's facts are kept", self.path,
                          self.agent_type)
            return TurnFacts()
        if facts.session_id is None and session_id:
            facts = msgspec.structs.replace(facts, session_id=session_id)
        return facts

    def _open(self) -> int | None:
        try:
            return open_log(self.path, owner_uid=self.owner_uid, layout_parts=LAYOUT_PARTS[self.agent_type])
        except RefusedLog as exc:
            if not self._refusal_told:  # once per execution: it is looked at several times
                log.warning("session log refused: %s", exc)
                self._refusal_told = True
            return None
        except OSError:
            return None

    def _size(self) -> int | None:
        fd = self._open()
        if fd is None:
            return None
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def _messages(self) -> int | None:
        """How many messages a whole-document log holds now (None if it cannot be read whole)."""
        fd = self._open()
        if fd is None:
            return None
        try:
            return DOCUMENTS[self.agent_type][1](self._read_whole(fd))
        except OSError:
            return None
        finally:
            os.close(fd)

    @staticmethod
    def _read_whole(fd: int) -> bytes:
        size = os.fstat(fd).st_size
        return read_at(fd, 0, size) if size <= READ_MAX_BYTES else b""

    def _read_since_mark(self, fd: int) -> bytes:
        size = os.fstat(fd).st_size
        if size < self.offset:  # the file was cut short or replaced: all of it is new
            self.offset, self._session_id = 0, None
        start = max(self.offset, size - READ_MAX_BYTES)
        data = read_at(fd, start, min(size - start, READ_MAX_BYTES))
        if start > self.offset:  # read from the middle of a line: drop it
            data = data[data.find(b"\n") + 1:] if b"\n" in data else b""
        return data

    def _head_session_id(self, fd: int) -> str | None:
        """The session id the log's first line names (the turn's own lines may not)."""
        if self._session_id is None:
            head = read_at(fd, 0, HEAD_MAX_BYTES)
            found = _HEAD_SESSION_ID.search(head.split(b"\n", 1)[0])
            if found or b"\n" in head:  # an unfinished first line may name it later
                self._session_id = found.group(1).decode() if found else ""
        return self._session_id or None
