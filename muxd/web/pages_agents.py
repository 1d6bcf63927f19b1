"""GET / (the agents grid), GET /events (the grid, live, as server-sent events) and POST /answer
(choose one of a waiting agent's options), all as the session's token (sessions.py).

The grid is `muxd top`'s board (cli/top_live.read_board) plus the other hosts' panes of a shared
database (ListFleet), drawn by agents_grid.py. /events streams it whole on every change the
daemon's events announce (board_feed.py); the page's script swaps it in.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from muxd.cli.top_live import read_board
from muxd.client.connection import Client
from muxd.config import SUBMIT_GAP_S
from muxd.daemon.access.tiers import tier_rank
from muxd.detectors.confirm_keys import option_keys
from muxd.errors import BadRequest, Conflict
from muxd.protocol.fleet_messages import ListFleet
from muxd.protocol.messages import SendKeys, ShowPane
from muxd.web.actions import action, done
from muxd.web.agents_grid import ANSWER_PATH, FleetEntry, grid_html
from muxd.web.board_feed import BoardFeeds
from muxd.web.html import page
from muxd.web.sessions import ACTING_TIER, WebSession, daemon_link, require_session, table_of

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies (and ssh -L) from closing an idle stream
EVENTS_PATH = "/events"


async def render_grid(client: Client, csrf: str = "") -> str:
    """The grid as `client`'s token sees it now."""
    panes, executions = await read_board(client)
    fleet = await client.call(ListFleet)
    entries = [FleetEntry(pane=msgspec.structs.replace(p.pane, id=p.target), host=p.host, stale=p.stale)
               for p in fleet.panes] if fleet.shared else []
    tier = client.welcome.tier if client.welcome is not None else "admin"
    return grid_html(panes, executions, fleet=entries, can_act=tier_rank(tier) >= tier_rank(ACTING_TIER), csrf=csrf)


async def agents(request: Request) -> Response:
    client = await daemon_link(request)
    session = require_session(request)
    grid = await render_grid(client, session.csrf)
    body = (f'<h1>Agents</h1><p class="status" id="status" role="status"></p>'
            f'<div id="grid" data-live="{EVENTS_PATH}">{grid}</div>')
    return HTMLResponse(page("Agents", body, session, current="/"))


def _sse(event: str, data: str) -> str:
    lines = data.splitlines() or [""]
    return f"event: {event}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


async def events(request: Request) -> Response:
    """The grid as server-sent events: `grid` with the grid's HTML now and after each change;
    `ended` when the daemon went or no longer takes the token (the script then reloads)."""
    session = require_session(request)
    await daemon_link(request)  # a revoked token is told now, as a redirect, not as a stream
    table = table_of(request)
    feeds: BoardFeeds = request.app.state.feeds

    async def connect(on_event: object) -> Client:
        return await table.connect(session.token, on_event=on_event)  # type: ignore[arg-type]

    feed = feeds.feed(session.token_key, connect, render_grid)

    async def stream() -> AsyncIterator[str]:
        async with feed.watch() as grids:
            yield "retry: 2000\n\n"
            while True:
                try:
                    grid = await asyncio.wait_for(grids.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                if feed.failure is not None:
                    yield _sse("ended", f"{feed.failure.code}: {feed.failure.message}")
                    return
                yield _sse("grid", grid)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


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


