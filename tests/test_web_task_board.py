"""task_board.py: the board's columns follow the state machine, a card and a task page escape
what they show, and review buttons are drawn only for a tier and scopes the daemon would let review."""

from __future__ import annotations

from types import SimpleNamespace

from muxd.tasks.model import STATES, Review, Task, TaskEvent
from muxd.web.task_board import board_html, may_review, review_path, task_html

NOW = 1_800_000_000.0
HOSTILE = '<img src=x onerror="alert(1)">'


def _session(tier: str, scopes: frozenset[str] | None = None) -> SimpleNamespace:
    """What the builders read of a WebSession: its tier, its token's scopes and CSRF token."""
    return SimpleNamespace(tier=tier, scopes=scopes, csrf="csrf-123")


def _task(state: str, title: str = "fix the build", **kw: object) -> Task:
    return Task(id=f"task-{state}", title=title, state=state, created_at=NOW - 60, updated_at=NOW - 5,  # type: ignore[arg-type]
                **kw)  # type: ignore[arg-type]


def test_the_board_has_a_column_per_state_in_order_and_escapes_titles() -> None:
    columns = {state: ([_task(state, HOSTILE if state == "ready" else "t")], 3 if state == "done" else 1)
               for state in STATES}
    html = board_html(_session("admin"), columns, None, now=NOW)  # type: ignore[arg-type]
    order = [html.index(f'<section class="column" data-state="{state}"') for state in STATES]
    assert order == sorted(order)
    assert HOSTILE not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "(1 of 3)" in html  # a column cut short says so
    assert html.count('class="review approve"') == 1  # only the task under review
    assert f'action="{review_path("task-needs_review")}"' in html and 'value="csrf-123"' in html


def test_review_buttons_follow_the_tier_the_daemon_asks() -> None:
    task = _task("needs_review", feedback="tests pass")
    for tier, shown in (("view_only", False), ("execute_basic", False), ("execute_advanced", True), ("admin", True)):
        assert may_review(_session(tier)) is shown  # type: ignore[arg-type]
        page = task_html(_session(tier), task, [], [], [], now=NOW)  # type: ignore[arg-type]
        assert ("Approve" in page) is shown and ("Reject" in page) is shown, tier
    assert "Approve" not in task_html(_session("admin"), _task("in_progress"), [], [], [], now=NOW)  # type: ignore[arg-type]


def test_review_buttons_need_the_tasks_write_scope_the_greeting_tells() -> None:
    task = _task("needs_review")
    for scopes, shown in ((frozenset({"tasks:read"}), False), (frozenset(), False),
                          (frozenset({"tasks:read", "tasks:write"}), True), (None, True)):  # None: not told
        session = _session("execute_advanced", scopes)
        assert may_review(session) is shown, scopes  # type: ignore[arg-type]
        assert ("Approve" in task_html(session, task, [], [], [], now=NOW)) is shown, scopes  # type: ignore[arg-type]


def test_a_task_page_shows_its_events_and_reviews_escaped() -> None:
    task = _task("needs_review", description=HOSTILE)
    events = [TaskEvent(task_id=task.id, at=NOW - 30, kind="status", actor="agent:%3", from_state="in_progress",
                        to_state="needs_review", detail={"reason": HOSTILE})]
    reviews = [Review(task_id=task.id, at=NOW - 10, reviewer="token:lead", verdict="comment", comment=HOSTILE,
                      blocking=True)]
    page = task_html(_session("view_only"), task, events, reviews, [], now=NOW)  # type: ignore[arg-type]
    assert HOSTILE not in page and page.count("&lt;img") == 3
    assert "agent:%3" in page and "token:lead" in page and "blocking" in page and "30s ago" in page
