"""`SessionStoreCursor`: a `SessionLogCursor` for an agent that keeps its turns as rows of a
database rather than lines of a file (Kilo): the path is the database, the scope the agent's
cwd (which session is its own), the offset the time (ms) of the newest message at the mark.
`cursor_for` gives whichever cursor an agent's log needs."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from muxd.executions.session_logs import kilo
from muxd.executions.session_logs.cursor import PARSERS, SessionLogCursor
from muxd.executions.session_logs.facts import TurnFacts

log = logging.getLogger(__name__)

STORE_AGENTS = frozenset({"kilo"})
READ_AGENTS = frozenset(PARSERS) | STORE_AGENTS  # every agent whose turns muxd reads


class SessionStoreCursor:
    """As SessionLogCursor: `mark()` when an execution starts, `read_turn()` for its facts."""

    def __init__(self, path: Path, agent_type: str, owner_uid: int | None, scope: str) -> None:
        if agent_type not in STORE_AGENTS:
            raise ValueError(f"no session store reader for {agent_type}")
        self.path, self.agent_type, self.scope = path, agent_type, scope
        self.owner_uid = os.getuid() if owner_uid is None else owner_uid
        self.offset = 0

    def mark(self) -> int:
        """Remember the newest message now as the start of the execution; returns its time."""
        self.offset = kilo.newest_message_ms(self.path, self.scope, self.owner_uid) or 0
        return self.offset

    def grew(self) -> bool:
        """A message came since `mark()` (False for a store gone or refused)."""
        newest = kilo.newest_message_ms(self.path, self.scope, self.owner_uid)
        return newest is not None and newest > self.offset

    def read_turn(self) -> TurnFacts:
        """The facts of the messages since `mark()` (empty facts if there are none, or the
        store is not one muxd reads)."""
        messages, session_id = kilo.messages_since(self.path, self.scope, self.offset, self.owner_uid)
        try:
            return kilo.parse_turn(messages, session_id)
        except Exception:  # a row of a shape no release wrote: what the screen showed is kept
            log.exception("session store %s: its %s reader failed; the screen's facts are kept", self.path,
                          self.agent_type)
            return TurnFacts()


def cursor_for(path: Path, agent_type: str, owner_uid: int | None = None,
               scope: str | None = None) -> SessionLogCursor | SessionStoreCursor:
    """The cursor for `agent_type`'s log at `path` (`scope`: the agent's cwd, for a store)."""
    if agent_type in STORE_AGENTS:
        return SessionStoreCursor(path, agent_type, owner_uid, scope or "")
    return SessionLogCursor(path, agent_type, owner_uid)
