"""A live board as server-sent events (GET /events, /tasks/events): `grid` with the board's HTML
now and after each change its feed hears of (board_feed.py); `ended` when the session ended
(logout), the daemon went or no longer takes the token. The page's script (static/app.js) swaps
each board in; a board from a feed carries no CSRF token (one feed serves every browser of a
token): the script fills the session's in."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from muxd.client.connection import Client
from muxd.web.board_feed import BoardFeeds, ChangedBy, RenderFactory
from muxd.web.board_read import panes_named
from muxd.web.sessions import daemon_link, require_session, table_of

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies (and ssh -L) from closing an idle stream


def sse(event: str, data: str) -> str:
    lines = data.splitlines() or [""]
    return f"event: {event}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


async def live_events(request: Request, board: str, render: RenderFactory, *, kinds: list[str] | None = None,
                      changed_by: ChangedBy = panes_named) -> Response:
    """The stream of the session's feed of `board` (one per token and board name; made by `render`,
    subscribed to `kinds`, read again as `changed_by` says)."""
    session = require_session(request)
    await daemon_link(request)  # a revoked token is told now, as a redirect, not as a stream
    table = table_of(request)
    feeds: BoardFeeds = request.app.state.feeds

    async def connect(on_event: object) -> Client:
        return await table.connect(session.token, on_event=on_event)  # type: ignore[arg-type]

    feed = feeds.feed(f"{board}:{session.token_key}", connect, render, kinds=kinds, changed_by=changed_by)

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
                        yield sse("ended", "logged out")
                        return
                    if not grid.done():
                        grid.cancel()
                        yield ": keepalive\n\n"
                        continue
                    if feed.failure is not None:
                        yield sse("ended", f"{feed.failure.code}: {feed.failure.message}")
                        return
                    yield sse("grid", grid.result())
            finally:
                ended.cancel()

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
