"""The agents grid as HTML: `muxd top`'s rows (cli/top_board.py: those that need you first, in
the attention board's order) as cards, with what a waiting agent asks and its options as answer
buttons. Pure: panes and executions in, escaped HTML out (html.esc on every value).

A card's time in state is its `data-since` against the board's `data-now` (the server's clock);
the page's script counts on from there, so the browser's clock (another machine's, over `ssh -L`)
never enters it and the times move without a request.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from muxd.cli.top_board import BUSY_RANK, AgentRow, agent_rows
from muxd.daemon.attention.agent_events import question_of
from muxd.executions.record import Execution
from muxd.protocol.messages import PaneInfo
from muxd.terminal_text import visible
from muxd.web.html import esc
from muxd.web.security import CSRF_FIELD

# AgentRow.cells' places (top_board.HEADINGS).
PANE, WHERE, AGENT, STATE, FOR, WHAT, TOKENS, COST, EXEC = range(9)
ANSWER_PATH = "/answer"


@dataclass(frozen=True)
class FleetEntry:
    """Another host's pane (ListFleet): its PaneInfo named %N@host, and whether its host is stale."""

    pane: PaneInfo
    host: str
    stale: bool


def grid_html(panes: Sequence[PaneInfo], executions: dict[str, Execution], *, fleet: Iterable[FleetEntry] = (),
              can_act: bool, csrf: str = "", now: float | None = None) -> str:
    """Every agent as a card, those that need you first under their own heading. `csrf`: the
    session's token for the answer forms ("" when the script fills it in: a shared live feed)."""
    now = time.time() if now is None else now
    remote = {entry.pane.id: entry for entry in fleet}
    by_id = {pane.id: pane for pane in panes} | {entry.pane.id: entry.pane for entry in remote.values()}
    rows = agent_rows(by_id.values(), executions, now)
    needs = [row for row in rows if row.rank < BUSY_RANK]
    rest = [row for row in rows if row.rank >= BUSY_RANK]
    cards = [_section("needs-you", "Needs you", needs, by_id, remote, can_act, csrf, now),
             _section("agents", "Agents", rest, by_id, remote, can_act, csrf, now)]
    if not rows:
        cards.append('<p class="empty">No agents run in the panes this token may see.</p>')
    return f'<div class="board" data-now="{now:.3f}">{"".join(cards)}</div>'


def _section(key: str, title: str, rows: list[AgentRow], panes: dict[str, PaneInfo], remote: dict[str, FleetEntry],
             can_act: bool, csrf: str, now: float) -> str:
    if not rows:
        return ""
    cards = "".join(_card(row, panes[row.pane_id], remote.get(row.pane_id), can_act, csrf, now) for row in rows)
    return f'<section class="{key}"><h2>{esc(title)} <span class="count">{len(rows)}</span></h2>' \
           f'<div class="cards">{cards}</div></section>'


def _card(row: AgentRow, pane: PaneInfo, remote: FleetEntry | None, can_act: bool, csrf: str, now: float) -> str:
    cells = row.cells
    agent = pane.agent
    need = row.need or ("busy" if row.rank == BUSY_RANK else "rest")
    since = pane.attention_since if pane.attention is not None else agent.activity.since
    title = (f'<a href="/pane/{esc(quote(pane.id, safe=""))}">{esc(cells[PANE])}</a>' if remote is None
             else f'<span>{esc(cells[PANE])}</span> <span class="host">{esc(remote.host)}'
                  f'{" (stale)" if remote.stale else ""}</span>')
    parts = [f'<header>{title} <span class="where">{esc(cells[WHERE])}</span> '
             f'<span class="agent-type">{esc(cells[AGENT])}</span></header>',
             f'<p class="state"><span class="state-name">{esc(cells[STATE])}</span> '
             '<span class="for"></span></p>']
    question = question_of(agent) if agent.activity.state in ("AwaitingConfirmation", "AwaitingInput") else None
    if question:
        parts.append(f'<p class="question">{esc(visible(question))}</p>')
    elif cells[WHAT]:
        parts.append(f'<p class="what">{esc(cells[WHAT])}</p>')
    if agent.error is not None:
        parts.append(f'<p class="error">{esc(visible(agent.error.type + ": " + agent.error.message))}</p>')
    if agent.confirmation is not None and agent.confirmation.options:
        parts.append(_options(pane, agent.confirmation.options, can_act and remote is None, csrf))
    facts = [(label, cells[i]) for label, i in (("tokens", TOKENS), ("cost", COST), ("execution", EXEC)) if cells[i]]
    if facts:
        items = "".join(f"<dt>{esc(label)}</dt><dd>{_exec_link(value) if label == 'execution' else esc(value)}</dd>"
                        for label, value in facts)
        parts.append(f'<dl class="facts">{items}</dl>')
    inner = "".join(parts)
    # The card's version: the page's script replaces a card only when it changed (a button under
    # the pointer stays put while other cards move). Its time in state is not in it: the script
    # counts that from data-since, against the server's clock (the board's data-now).
    version = hashlib.blake2b(inner.encode(), digest_size=8).hexdigest()
    since_attr = "" if since is None else f' data-since="{since:.3f}"'
    return (f'<article class="agent need-{esc(need)}" id="pane-{esc(pane.id)}" data-pane="{esc(pane.id)}" '
            f'data-state="{esc(cells[STATE])}" data-v="{version}"{since_attr}>{inner}</article>')


def _options(pane: PaneInfo, options: list[str], can_act: bool, csrf: str) -> str:
    """The options as shown; buttons that answer when the token may type into the pane."""
    if not can_act:
        items = "".join(f"<li>{esc(visible(option))}</li>" for option in options)
        return f'<ul class="options">{items}</ul>'
    forms = "".join(
        f'<form method="post" action="{ANSWER_PATH}" class="answer" data-async>'
        f'<input type="hidden" name="{CSRF_FIELD}" value="{esc(csrf)}">'
        f'<input type="hidden" name="pane" value="{esc(pane.id)}">'
        f'<input type="hidden" name="option" value="{n}">'
        f'<input type="hidden" name="text" value="{esc(option)}">'
        f'<button type="submit">{esc(visible(option))}</button></form>'
        for n, option in enumerate(options))
    return f'<div class="options">{forms}</div>'


def _exec_link(execution_id: str) -> str:
    return f'<a href="/execution/{esc(quote(execution_id, safe=""))}">{esc(execution_id)}</a>'
