"""GET /tasks (the queue as a board), GET /tasks/events (the board, live), GET /task/{id} (one
task, its events, reviews and executions) and POST /task/{id}/review (approve or reject a task
under review), all as the session's token: the same list-tasks, get-task and review-task requests
`muxd task` sends, so the daemon's tier and scope rules (tasks:read, tasks:write) decide, a
view_only token's review refused there whatever the page drew.

The board is live as the agents grid is (board_feed.py, live_stream.py): its feed hears the
daemon's task-changed events (every creation and move of a task, whoever made it) and reads the
columns again, at most once per REDRAW_MIN_INTERVAL_S however many tasks move. A task's page is
live too (GET /task/{id}/events): its feed reads the task again only after an event naming it
(or one naming no task: leases that ran out)."""

from __future__ import annotations

import asyncio
from urllib.parse import quote, urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from muxd.client.connection import Client
from muxd.errors import BadRequest
from muxd.protocol.task_messages import GetTask, ListTasks, ReviewTask
from muxd.tasks.model import FINAL_STATES
from muxd.protocol.event_messages import TASK_EVENT_KINDS, DaemonEvent
from muxd.web.actions import action, done
from muxd.web.board_feed import Render, read_all
from muxd.web.html import esc, page
from muxd.web.live_stream import live_events
from muxd.web.sessions import WebSession, daemon_link, require_session
from muxd.web.task_board import (COLUMN_TITLES, Columns, FeedViewer, board_html, columns_html, task_html,
                             task_path)

BOARD_PATH = "/tasks"
BOARD_EVENTS_PATH = "/tasks/events"
COLUMN_TASKS_MAX = 50  # cards a column shows (its total is said); list-tasks allows up to 100
# Done and failed: the latest moved first (a task just approved is on top); the others by priority.


async def read_columns(client: Client, plan: str | None) -> Columns:
    """Each state's tasks (of `plan`; None: every plan), a column a request, all at once on the one connection."""
    replies = await asyncio.gather(*(client.call(ListTasks, states=[state], plan=plan, limit=COLUMN_TASKS_MAX,
                                                 newest_first=state in FINAL_STATES)
                                     for state in COLUMN_TITLES))
    return {state: (reply.tasks, reply.total) for state, reply in zip(COLUMN_TITLES, replies)}


async def board(request: Request) -> Response:
    client = await daemon_link(request)
    session = require_session(request)
    plan = request.query_params.get("plan") or None
    columns = await read_columns(client, plan)
    live = BOARD_EVENTS_PATH + (f"?{urlencode({'plan': plan})}" if plan else "")
    return HTMLResponse(page("Tasks", board_html(session, columns, plan, live=live), session, current=BOARD_PATH))


def feed_viewer(client: Client) -> FeedViewer:
    """The feed's token as its greeting told it: what a shared live page is drawn for (no CSRF token)."""
    welcome = client.welcome
    return FeedViewer(tier=welcome.tier if welcome is not None else "admin",
                      scopes=None if welcome is None or welcome.scopes is None else frozenset(welcome.scopes))


def live_board(plan: str | None) -> Render:
    """A feed's render: the columns as its token sees them, drawn for that token."""
    async def render(client: Client, changed: set[str] | None) -> str:
        return columns_html(feed_viewer(client), await read_columns(client, plan))

    return render


def live_task(task_id: str) -> Render:
    """A feed's render of one task's page; the page drawn before when the events were of other tasks."""
    drawn: list[str] = []

    async def render(client: Client, changed: set[str] | None) -> str:
        if drawn and changed is not None and task_id not in changed:
            return drawn[0]
        reply = await client.call(GetTask, task_id=task_id)
        drawn[:] = [task_html(feed_viewer(client), reply.task, reply.events, reply.reviews, reply.executions)]
        return drawn[0]

    return render


def task_named(event: DaemonEvent) -> set[str] | None:
    """The task a task-changed event moved; None (read again) when it names none."""
    return None if event.task_id is None else {event.task_id}


async def board_events(request: Request) -> Response:
    """The board, live: its feed (one per token and plan) hears the queue's task-changed events."""
    plan = request.query_params.get("plan") or None
    return await live_events(request, f"tasks:{plan or ''}", lambda: live_board(plan),
                             kinds=list(TASK_EVENT_KINDS), changed_by=read_all)


async def task(request: Request) -> Response:
    client = await daemon_link(request)
    session = require_session(request)
    reply = await client.call(GetTask, task_id=request.path_params["task_id"])
    body = task_html(session, reply.task, reply.events, reply.reviews, reply.executions)
    live = f'<div id="grid" data-live="{esc(task_events_path(reply.task.id))}">{body}</div>'
    return HTMLResponse(page(reply.task.title, live, session, current=BOARD_PATH))


def task_events_path(task_id: str) -> str:
    return f"{task_path(quote(task_id, safe=''))}/events"


async def task_events(request: Request) -> Response:
    """A task's page, live: its feed (one per token and task) hears the queue's task-changed events."""
    task_id = request.path_params["task_id"]
    return await live_events(request, f"task:{task_id}", lambda: live_task(task_id),
                             kinds=list(TASK_EVENT_KINDS), changed_by=task_named)


async def review(request: Request, session: WebSession, form: FormData) -> Response:
    """Approve, or reject (`final`: fail it), the task of the path: review-task as the session's token."""
    verdict = form.get("verdict")
    if verdict not in ("approve", "reject"):
        raise BadRequest("verdict must be approve or reject", field="verdict")
    comment = form.get("comment")
    task_id = request.path_params["task_id"]
    reply = await (await daemon_link(request)).call(
        ReviewTask, task_id=task_id, verdict=verdict, comment=comment if isinstance(comment, str) and comment else None,
        final=verdict == "reject" and form.get("final") == "1")
    back = form.get("back")
    said = {"approve": "approved", "reject": "rejected"}[verdict]
    return done(request, f"{said}: {reply.task.title} is {reply.task.state}",
                back=back if isinstance(back, str) else task_path(reply.task.id))


ROUTES: list[Route] = [
    Route(BOARD_PATH, board, methods=["GET"]),
    Route(BOARD_EVENTS_PATH, board_events, methods=["GET"]),
    Route("/task/{task_id}", task, methods=["GET"]),
    Route("/task/{task_id}/events", task_events, methods=["GET"]),
    action("/task/{task_id}/review", "review_task", review),
]
