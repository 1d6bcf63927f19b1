"""A pane's agent session id for its summary: what the agent's screen showed (a status panel,
the resume hint it prints on exit; kept in `AgentState.session.id` by the runner) or else what
a registered reader finds where the agent stores it.

Claude Code and Codex also write session logs (`~/.claude/projects/…`, `$CODEX_HOME/sessions/…`);
reading those is the job of a reader registered here (`register_session_id_reader`), asked only
when the screen gave no id. Readers must be quick (a summary waits on them) and must not raise
for a pane they cannot place: they return None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from muxd.detectors.state import AgentState

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane

log = logging.getLogger(__name__)

# (pane, its current agent state) -> the agent's session id, or None if this reader cannot tell.
SessionIdReader = Callable[["Pane", AgentState], "str | None"]
_readers: list[SessionIdReader] = []


def register_session_id_reader(reader: SessionIdReader) -> None:
    """Ask `reader` for the session id of a pane whose screen gave none (readers are asked in
    the order registered; the first id wins)."""
    _readers.append(reader)


def session_id(pane: Pane, state: AgentState) -> str | None:
    """The session id of the agent in `pane`: the screen's, else the first reader's."""
    if state.session.id is not None or not state.is_agent:
        return state.session.id
    for reader in _readers:
        try:
            found = reader(pane, state)
        except Exception:  # a broken reader costs its answer, never the summary
            log.exception("session id reader %r failed on pane %s", reader, pane.id)
            continue
        if found:
            return found
    return None
