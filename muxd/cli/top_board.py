"""What `muxd top` shows, as data: one row per agent, those that need you first.

Pure: the daemon's pane records (PaneInfo, with the attention board's `attention`) and the
executions known for them in; ordered rows of cells out. The order is the attention board's
(muxd/daemon/attention/board.py: waiting, limited, failed, finished), then agents at work, then
the rest; within a rank who has waited longest comes first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from muxd.daemon.attention.agent_events import question_of
from muxd.daemon.attention.board import NEED_ORDER
from muxd.detectors.state import BUSY_STATES
from muxd.executions.record import ACTIVE_STATUSES, Execution
from muxd.protocol.messages import PaneInfo
from muxd.terminal_text import visible
from muxd.units import duration, tokens

BUSY_RANK = len(NEED_ORDER)
REST_RANK = BUSY_RANK + 1
# The columns, in order; top's frame drops and cuts them to fit (top_frame.py).
HEADINGS = ("PANE", "WHERE", "AGENT", "STATE", "FOR", "WHAT", "TOKENS", "COST", "EXEC")


@dataclass(frozen=True)
class AgentRow:
    pane_id: str
    rank: int                 # NEED_ORDER's index for a need; BUSY_RANK; REST_RANK
    need: str | None          # waiting, limited, failed, finished (the attention board's)
    cells: tuple[str, ...]    # one per HEADINGS, safe to print
    execution_id: str | None  # the running execution, else the last one


def agent_rows(panes: Iterable[PaneInfo], executions: dict[str, Execution], now: float | None = None) -> list[AgentRow]:
    """A row for each pane that holds an agent, in the order a person should look at them.
    `executions`: pane id -> its running execution, else its last."""
    now = time.time() if now is None else now
    ranked = []
    for pane in panes:
        if not pane.agent.is_agent and pane.attention is None:
            continue
        rank = _rank(pane)
        since = pane.attention_since if pane.attention is not None else pane.agent.activity.since
        ranked.append(((rank, since if rank < BUSY_RANK and since is not None else 0.0,
                        pane.session, pane.window, pane.index), _row(pane, rank, executions.get(pane.id), now)))
    ranked.sort(key=lambda item: item[0])
    return [row for _, row in ranked]


def _rank(pane: PaneInfo) -> int:
    if pane.attention in NEED_ORDER:
        return NEED_ORDER.index(pane.attention)
    return BUSY_RANK if pane.agent.activity.state in BUSY_STATES else REST_RANK


def _row(pane: PaneInfo, rank: int, execution: Execution | None, now: float) -> AgentRow:
    agent = pane.agent
    since = pane.attention_since if pane.attention is not None else agent.activity.since
    state = pane.attention or agent.activity.state
    cost = agent.session.cost_usd if agent.session.cost_usd is not None else \
        execution.cost_usd if execution is not None else None
    # ~ marks muxd's estimate of the last execution (its tokens priced), not the agent's own figure
    estimated = agent.session.cost_usd is None and execution is not None and execution.cost_source == "estimate"
    cells = (pane.id + (f" {pane.name}" if pane.name else ""), f"{pane.session}:{pane.window}",
             agent.agent_type or "", state, "" if since is None else duration(now - since), what(pane),
             tokens(agent.session.tokens_used), "" if cost is None else ("~" if estimated else "") + f"${cost:.2f}",
             execution.id if execution is not None else "")
    return AgentRow(pane_id=pane.id, rank=rank, need=pane.attention, cells=tuple(visible(c) for c in cells),
                    execution_id=execution.id if execution is not None else None)


def what(pane: PaneInfo) -> str:
    """The WHAT cell: the question or error a need carries, else what the agent is doing."""
    agent = pane.agent
    if pane.attention_text:
        return " ".join(pane.attention_text.split())
    if agent.activity.state in ("AwaitingConfirmation", "AwaitingInput"):
        return question_of(agent) or ""
    if agent.error is not None:
        return f"{agent.error.type}: {agent.error.message}"
    if agent.tool and agent.activity.state == "ToolUse":
        return agent.tool + (f": {agent.tool_input}" if agent.tool_input else "")
    return agent.activity.description or ""


def executions_by_pane(panes: Iterable[PaneInfo], recent: Iterable[Execution],
                       active: Iterable[Execution]) -> dict[str, Execution]:
    """Pane id -> its running (or pending) execution, else its newest one. Pane ids start again
    in every daemon run, so an execution older than the pane is another pane's."""
    born = {pane.id: pane.created_at for pane in panes}
    found: dict[str, Execution] = {}
    for execution in [*recent, *active]:  # active last: it wins
        created = born.get(execution.pane_id)
        when = execution.started_at or execution.queued_at or 0.0
        if created is None or when < created:
            continue
        held = found.get(execution.pane_id)
        if held is None or execution.status in ACTIVE_STATUSES or \
                (held.status not in ACTIVE_STATUSES and when > (held.started_at or held.queued_at or 0.0)):
            found[execution.pane_id] = execution
    return found


def need_counts(rows: Iterable[AgentRow]) -> dict[str, int]:
    """How many rows have each need, in NEED_ORDER (the frame's title line)."""
    counts = dict.fromkeys(NEED_ORDER, 0)
    for row in rows:
        if row.need in counts:
            counts[row.need] += 1
    return {kind: n for kind, n in counts.items() if n}
