"""Which agents need a person now, and why: the board every attention surface reads (window
flags, the status line's count, `muxd top`, notifications).

One need per pane, from the bus's agent events:
- `waiting`: it waits for a confirmation or an answer (as long as it does);
- `limited`: it hit a usage limit (as long as it shows it);
- `failed`: its turn failed, and nobody has looked since;
- `finished`: its turn ended, and nobody has looked since.
The last two are cleared by `seen` (a client shows the pane's window) and by the agent's next
turn; all four when the pane goes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import msgspec

from muxd.detectors.state import BUSY_STATES
from muxd.protocol.event_messages import DaemonEvent

# The flag each need adds to a window's #{window_flags} (next to tmux's # ! ~ * - Z).
NEED_FLAGS = {"waiting": "?", "limited": "$", "failed": "X", "finished": "+"}
# The order a person should see them in: who is blocked on them first.
NEED_ORDER = ("waiting", "limited", "failed", "finished")
_LIVE = frozenset({"waiting", "limited"})  # true while the agent shows it; the others until seen


class Need(msgspec.Struct, frozen=True):
    kind: str                       # waiting, limited, failed, finished
    since: float                    # wall-clock time it began
    text: str | None = None         # the question, the error, the limit's message
    resets_at: float | None = None  # limited: when the agent says it resets
    execution_id: str | None = None


class AttentionBoard:
    def __init__(self, viewed: Callable[[str], bool] = lambda pane_id: False) -> None:
        self.viewed = viewed  # is the pane shown on an attached client now (set by the attach hub)
        self._needs: dict[str, Need] = {}

    def take(self, event: DaemonEvent) -> None:
        """A bus listener: the board follows the agent events."""
        pane_id, kind = event.pane_id, event.kind
        if pane_id is None:
            return
        held = self._needs.get(pane_id)
        if kind == "agent-state":
            if held is not None and held.kind in _LIVE and not _shows(held.kind, event.state):
                del self._needs[pane_id]
            elif held is not None and event.state in BUSY_STATES:
                del self._needs[pane_id]  # a new turn: what ended before is over
        elif kind == "agent-waiting":
            self._needs[pane_id] = Need("waiting", event.at, event.question)
        elif kind == "agent-limited":
            self._needs[pane_id] = Need("limited", event.at, event.error, event.resets_at)
        elif kind == "agent-failed":
            if not self.viewed(pane_id) and (held is None or held.kind not in _LIVE):
                self._needs[pane_id] = Need("failed", event.at, event.error, execution_id=event.execution_id)
        elif kind == "agent-idle":
            if not self.viewed(pane_id) and (held is None or held.kind == "finished"):
                self._needs[pane_id] = Need("finished", event.at)
        elif kind in ("pane-exited", "pane-died"):
            self._needs.pop(pane_id, None)

    def seen(self, pane_ids: Iterable[str]) -> bool:
        """A person looked at these panes: what ended there is no longer news. True if a need went."""
        gone = False
        for pane_id in pane_ids:
            held = self._needs.get(pane_id)
            if held is not None and held.kind not in _LIVE:
                del self._needs[pane_id]
                gone = True
        return gone

    def forget(self, pane_id: str) -> None:
        self._needs.pop(pane_id, None)

    def need(self, pane_id: str) -> Need | None:
        return self._needs.get(pane_id)

    def needs(self) -> dict[str, Need]:
        return dict(self._needs)

    def flags(self, pane_ids: Iterable[str]) -> str:
        """The agent flags of a window holding these panes, in NEED_ORDER."""
        kinds = {n.kind for p in pane_ids if (n := self._needs.get(p)) is not None}
        return "".join(NEED_FLAGS[k] for k in NEED_ORDER if k in kinds)

    def counts(self, pane_ids: Iterable[str]) -> Counter[str]:
        """How many of these panes need a person, by kind."""
        return Counter(n.kind for p in pane_ids if (n := self._needs.get(p)) is not None)


def _shows(need: str, state: str | None) -> bool:
    if need == "waiting":
        return state in ("AwaitingConfirmation", "AwaitingInput")
    return state == "UsageLimited"
