"""GET / (the agents grid), GET /events (the grid, live, as server-sent events) and POST /answer
(choose one of a waiting agent's options), all as the session's token (sessions.py).

The grid is `muxd top`'s board plus the other hosts' panes of a shared database (board_read.py),
drawn by agents_grid.py. /events streams it whole on every change the
daemon's events announce (board_feed.py, live_stream.py), the other hosts' changes included (its
fleet-changed events); the page's script swaps it in.
"""

from __future__ import annotations

import asyncio

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from muxd.client.connection import Client
from muxd.config import SUBMIT_GAP_S
from muxd.daemon.access.tiers import tier_rank
from muxd.detectors.confirm_keys import option_keys
from muxd.errors import BadRequest, Conflict
from muxd.protocol.messages import SendKeys, ShowPane
from muxd.web.actions import action, done
from muxd.web.agents_grid import ANSWER_PATH, grid_html
from muxd.web.board_feed import Render
from muxd.web.board_read import GRID_EVENT_KINDS, BoardRead
from muxd.web.html import page
from muxd.web.live_stream import live_events
from muxd.web.sessions import ACTING_TIER, WebSession, daemon_link, require_session

EVENTS_PATH = "/events"


async def render_grid(client: Client, board: BoardRead | None = None, changed: set[str] | None = None,
                      csrf: str = "") -> str:
    """The grid as `client`'s token sees it now (`board`: as last read, read again where `changed` says)."""
    panes, executions, fleet = await (board or BoardRead()).read(client, changed)
    tier = client.welcome.tier if client.welcome is not None else "admin"
    return grid_html(panes, executions, fleet=fleet, can_act=tier_rank(tier) >= tier_rank(ACTING_TIER), csrf=csrf)


def live_render() -> Render:
    """A feed's render: its own board, kept between events."""
    board = BoardRead()
    return lambda client, changed: render_grid(client, board, changed)


async def agents(request: Request) -> Response:
    client = await daemon_link(request)
    session = require_session(request)
    grid = await render_grid(client, csrf=session.csrf)
    body = (f'<h1>Agents</h1><p class="status" id="status" role="status"></p>'
            f'<div id="grid" data-live="{EVENTS_PATH}" data-background="keep">{grid}</div>')
    return HTMLResponse(page("Agents", body, session, current="/"))


async def events(request: Request) -> Response:
    """The grid, live (live_stream.py)."""
    return await live_events(request, "agents", live_render, kinds=GRID_EVENT_KINDS)


async def answer(request: Request, session: WebSession, form: FormData) -> Response:
    """Choose option `option` of what pane `pane` asks, if it still asks it (`text`: the option as
    the page showed it): the keys as `muxd top`'s y/n sends them, one write each."""
    pane_id, text = _field(form, "pane"), _field(form, "text")
    try:
        index = int(_field(form, "option"))
    except ValueError:
        raise BadRequest("option must be a number", field="option") from None
    client = await daemon_link(request)
    agent = (await client.call(ShowPane, target=pane_id)).pane.agent  # as it is now, not as last drawn
    options = agent.confirmation.options if agent.confirmation is not None else []
    if not 0 <= index < len(options) or options[index] != text:
        raise Conflict(f"{pane_id} no longer asks that: look again", pane_id=pane_id)
    for n, key in enumerate(option_keys(agent, index)):
        if n:  # each key its own write, as a person types them (Aider's y, then Enter)
            await asyncio.sleep(SUBMIT_GAP_S)
        await client.call(SendKeys, target=pane_id, keys=[key])
    return done(request, f"answered {pane_id}: {text}")


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"the form has no {name}", field=name)
    return value


ROUTES: list[Route] = [
    Route("/", agents, methods=["GET"]),
    Route(EVENTS_PATH, events, methods=["GET"]),
    action(ANSWER_PATH, "answer", answer),
]


