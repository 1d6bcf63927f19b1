"""The task queue as HTML (GET /tasks, GET /task/{id}): a column per state of the task state
machine (muxd/tasks/states.py), a card per task, and one task with its events, reviews and
executions. Pure: the daemon's replies in, HTML out, every value through `esc`.

The review buttons are drawn only for a session whose tier and token scopes (tasks:write, told by
the daemon's greeting) the daemon would let review: the rule of review-task
(access/request_rules.py). The daemon still judges every POST.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Protocol

import msgspec

from muxd.daemon.access.request_rules import rule_for
from muxd.daemon.access.tiers import tier_needed, tier_rank
from muxd.executions.record import Execution
from muxd.protocol.task_messages import ReviewTask
from muxd.tasks.model import STATES, Review, Task, TaskEvent
from muxd.units import duration
from muxd.web.html import csrf_field, esc

# A column per state, in the state machine's order (ready -> claimed -> in_progress -> needs_review -> done | failed).
COLUMN_TITLES = {state: state.replace("_", " ").capitalize() for state in STATES}
DETAIL_CHARS = 160  # an event's detail or a card's feedback, cut to this on the page


class Viewer(Protocol):
    """Who a board is drawn for: a WebSession, or a live feed's FeedViewer (one per token)."""

    @property
    def tier(self) -> str: ...

    @property
    def scopes(self) -> frozenset[str] | None: ...

    @property
    def csrf(self) -> str: ...


@dataclass(frozen=True)
class FeedViewer:
    """A token as a shared live board draws for it: its tier and scopes, no CSRF token (the page's
    script fills the session's in)."""

    tier: str
    scopes: frozenset[str] | None
    csrf: str = ""


def task_path(task_id: str) -> str:
    return f"/task/{task_id}"


def review_path(task_id: str) -> str:
    return f"/task/{task_id}/review"


def may_review(session: Viewer) -> bool:
    """Whether the daemon would let the session's tier and scopes send review-task."""
    rule = rule_for(ReviewTask)
    scoped_out = rule.scope is not None and session.scopes is not None and rule.scope not in session.scopes
    return not scoped_out and tier_rank(session.tier) >= tier_rank(tier_needed(rule.risk, rule.read_only))


def _ago(at: float | None, now: float) -> str:
    return "" if at is None else f"{duration(now - at)} ago"


def _cut(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 1] + "…"


def review_forms(session: Viewer, task: Task, back: str) -> str:
    """Approve, and reject with a comment (and "fail it for good"), for a task under review."""
    if task.state != "needs_review" or not may_review(session):
        return ""
    action = esc(review_path(task.id))
    back_field = f'<input type="hidden" name="back" value="{esc(back)}">'
    approve = (f'<form method="post" action="{action}" class="review approve">{csrf_field(session)}{back_field}'
               '<input type="hidden" name="verdict" value="approve"><button type="submit">Approve</button></form>')
    reject = (f'<form method="post" action="{action}" class="review reject">{csrf_field(session)}{back_field}'
              '<input type="hidden" name="verdict" value="reject">'
              '<input type="text" name="comment" placeholder="what to tell the worker" aria-label="comment">'
              '<label><input type="checkbox" name="final" value="1"> fail it</label>'
              '<button type="submit">Reject</button></form>')
    return f'<div class="review-actions">{approve}{reject}</div>'


def _version(session: Viewer, shown: object) -> str:
    """What a live page's script compares (data-v): what is shown and whether it has the review
    buttons, not the time (its "ago" words change at every draw)."""
    return hashlib.blake2b(msgspec.json.encode(shown) + bytes([may_review(session)]), digest_size=8).hexdigest()


def card(session: Viewer, task: Task, now: float) -> str:
    """One task on the board; its version (data-v) changes when the task or its buttons do, not
    with the time (the live board's script replaces only the cards whose version changed)."""
    facts = [f"priority {task.priority}"]
    if task.plan:
        facts.append(f"plan {task.plan}")
    if task.claimed_by:
        facts.append(f"held by {task.claimed_by}")
    if task.lease_expires_at is not None:
        facts.append(f"lease {duration(task.lease_expires_at - now)}")
    if task.attempts:
        facts.append(f"tries {task.attempts}")
    said = task.feedback or task.last_error
    note = f'<p class="note">{esc(_cut(said))}</p>' if said else ""
    version = _version(session, task)
    return (f'<article class="task-card" id="task-{esc(task.id)}" data-task="{esc(task.id)}" '
            f'data-state="{esc(task.state)}" data-v="{version}">'
            f'<a href="{esc(task_path(task.id))}">{esc(task.title)}</a>'
            f'<p class="task-facts">{esc(" · ".join(facts))} · {esc(_ago(task.updated_at, now))}</p>{note}'
            f'{review_forms(session, task, "/tasks")}</article>')


Columns = dict[str, tuple[list[Task], int]]  # state -> (its tasks shown, its total)


def board_html(session: Viewer, columns: Columns, plan: str | None, now: float | None = None, *,
               live: str = "") -> str:
    """The page's heading and its board; `live`: the path of the board's event stream (the page's
    script swaps each board it sends into #grid)."""
    heading = "<h1>Tasks</h1>" if plan is None else f"<h1>Tasks of plan {esc(plan)}</h1>"
    return (f'{heading}<p class="status" id="status" role="status"></p>'
            f'<div id="grid" data-live="{esc(live)}">{columns_html(session, columns, now)}</div>')


def columns_html(session: Viewer, columns: Columns, now: float | None = None) -> str:
    """The board: each state's column (its tasks shown, of its total); what the live feed sends."""
    now = time.time() if now is None else now
    parts = []
    for state, title in COLUMN_TITLES.items():
        tasks, total = columns.get(state, ([], 0))
        more = f' <span class="more">({len(tasks)} of {total})</span>' if total > len(tasks) else ""
        cards = "".join(card(session, task, now) for task in tasks) or '<p class="empty">none</p>'
        parts.append(f'<section class="column" data-state="{esc(state)}"><h2>{esc(title)} '
                     f'<span class="count">{total}</span>{more}</h2>{cards}</section>')
    return f'<div class="board task-columns">{"".join(parts)}</div>'


def _detail(detail: dict[str, object]) -> str:
    return _cut(" ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in detail.items()))


def _table(title: str, css_class: str, headers: tuple[str, ...], rows: str) -> str:
    """A titled table of a task's page: `rows` are its <tr>s, already escaped."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    return f'<h2>{title}</h2><table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _events(events: list[TaskEvent], now: float) -> str:
    rows = "".join(f'<tr><td>{esc(_ago(e.at, now))}</td><td>{esc(e.kind)}</td><td>{esc(e.actor or "")}</td>'
                   f'<td>{esc(e.from_state or "")}</td><td>{esc(e.to_state or "")}</td><td>{esc(_detail(e.detail))}</td></tr>'
                   for e in events)
    return _table("Events", "events", ("When", "Event", "By", "From", "To", "Detail"), rows)


def _reviews(reviews: list[Review], now: float) -> str:
    if not reviews:
        return ""
    rows = "".join(f'<tr><td>{esc(_ago(r.at, now))}</td><td>{esc(r.reviewer)}</td><td>{esc(r.verdict)}</td>'
                   f'<td>{esc(r.comment or "")}</td><td>{"blocking" if r.blocking and r.resolved_at is None else ""}'
                   '</td></tr>' for r in reviews)
    return _table("Reviews", "reviews", ("When", "Reviewer", "Verdict", "Comment", ""), rows)


def _executions(executions: list[Execution], now: float) -> str:
    if not executions:
        return ""
    rows = "".join(f'<tr><td><a href="/execution/{esc(e.id)}">{esc(e.id)}</a></td><td>{esc(e.agent_name)}</td>'
                   f'<td>{esc(e.kind)}</td><td>{esc(e.status)}</td><td>{esc(_ago(e.started_at or e.queued_at, now))}'
                   '</td></tr>' for e in executions)
    return _table("Executions", "executions", ("Id", "Agent", "Kind", "Status", "Started"), rows)


def task_html(session: Viewer, task: Task, events: list[TaskEvent], reviews: list[Review],
              executions: list[Execution], now: float | None = None) -> str:
    """One task: what it is, where it stands, its review buttons, then its history."""
    now = time.time() if now is None else now
    facts = [("State", task.state), ("Id", task.id), ("Plan", task.plan or ""), ("Priority", str(task.priority)),
             ("Held by", task.claimed_by or ""), ("Tries", str(task.attempts)),
             ("Verification", task.verification.kind), ("External ref", task.external_ref or ""),
             ("Feedback", task.feedback or ""), ("Last error", task.last_error or ""),
             ("Created", f"{_ago(task.created_at, now)} by {task.created_by or '?'}"),
             ("Updated", _ago(task.updated_at, now))]
    result = task.verification_result
    if result is not None:
        facts.append(("Check", f"{result.status}" + (f" (exit {result.exit_code})" if result.exit_code is not None else "")))
    rows = "".join(f'<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>' for k, v in facts if v)
    description = f'<pre class="description">{esc(task.description)}</pre>' if task.description else ""
    # Its version (data-v), as a card's: the live page is drawn again only when the task moved.
    version = _version(session, (task, events, reviews, executions))
    return (f'<div class="task-page" data-v="{version}">'
            f'<h1 data-task="{esc(task.id)}" data-state="{esc(task.state)}">{esc(task.title)}</h1>'
            f'<p><a href="/tasks">← the board</a></p><table class="task-facts">{rows}</table>{description}'
            f'{review_forms(session, task, task_path(task.id))}'
            f'{_events(events, now)}{_reviews(reviews, now)}{_executions(executions, now)}</div>')
