"""GET / (the agents grid), GET /events (the grid, live, as server-sent events) and POST /answer
(choose one of a waiting agent's options), all as the session's token (sessions.py).

The grid is `muxd top`'s board plus the other hosts' panes of a shared database (board_read.py),
drawn by agents_grid.py. /events streams it whole on every change the
daemon's events announce (board_feed.py); the page's script swaps it in.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from muxd.client.connection import Client
from muxd.config import SUBMIT_GAP_S
from muxd.daemon.access.tiers import tier_rank
from muxd.detectors.confirm_keys import option_keys
from muxd.errors import BadRequest, Conflict
from muxd.protocol.messages import SendKeys, ShowPane
from muxd.web.actions import action, done
from muxd.web.agents_grid import ANSWER_PATH, grid_html
from muxd.web.board_feed import BoardFeeds, Render
from muxd.web.board_read import BoardRead
from muxd.web.html import page
from muxd.web.sessions import ACTING_TIER, WebSession, daemon_link, require_session, table_of

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies (and ssh -L) from closing an idle stream
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
            f'<div id="grid" data-live="{EVENTS_PATH}">{grid}</div>')
    return HTMLResponse(page("Agents", body, session, current="/"))


def _sse(event: str, data: str) -> str:
    lines = data.splitlines() or [""]
    return f"event: {event}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


async def events(request: Request) -> Response:
    """The grid as server-sent events: `grid` with the grid's HTML now and after each change;
    `ended` when the session ended (logout), the daemon went or no longer takes the token."""
    session = require_session(request)
    await daemon_link(request)  # a revoked token is told now, as a redirect, not as a stream
    table = table_of(request)
    feeds: BoardFeeds = request.app.state.feeds

    async def connect(on_event: object) -> Client:
        return await table.connect(session.token, on_event=on_event)  # type: ignore[arg-type]

    feed = feeds.feed(session.token_key, connect, live_render)

    async def stream() -> AsyncIterator[str]:
        async with feed.watch() as grids:
            yield "retry: 2000\n\n"
            ended = asyncio.ensure_future(session.ended.wait())
            try:
                while True:
                    grid = asyncio.ensure_future(grids.get())
                    await asyncio.wait({grid, ended}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
                    if ended.done():
                        grid.cancel()
                        yield _sse("ended", "logged out")
                        return
                    if not grid.done():
                        grid.cancel()
                        yield ": keepalive\n\n"
                        continue
                    if feed.failure is not None:
                        yield _sse("ended", f"{feed.failure.code}: {feed.failure.message}")
                        return
                    yield _sse("grid", grid.result())
            finally:
                ended.cancel()

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


