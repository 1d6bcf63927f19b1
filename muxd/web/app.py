"""build_app(settings) -> the web view's Starlette app: the routes (routes.py) behind the guard
middleware (security.py), the session table and the live feeds in `app.state`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from muxd.errors import MuxdError
from muxd.mcp_server.limits import GuardLimits
from muxd.rate_limit import RateLimiter
from muxd.web.board_feed import BoardFeeds
from muxd.web.html import esc, page
from muxd.web.routes import build_routes
from muxd.web.security import GuardMiddleware
from muxd.web.sessions import SessionTable, session_of


@dataclass(frozen=True)
class WebSettings:
    socket_path: str          # the daemon's socket (or a remote server's address, -H)
    host: str = "127.0.0.1"   # where the server listens: its name is also a Host the guard accepts
    allowed_hosts: tuple[str, ...] = ()  # other names requests may give as Host (--allow-host)


async def _daemon_error(request: Request, exc: Exception) -> Response:
    """A daemon refusal or failure a page did not handle: its code and message, escaped."""
    assert isinstance(exc, MuxdError)
    status = {"bad_request": 400, "forbidden": 403, "unauthorized": 403, "not_found": 404, "conflict": 409,
              "rate_limited": 429, "quota_exceeded": 429, "server_not_running": 503, "timeout": 504}.get(exc.code, 502)
    body = f'<h1>{esc(exc.code)}</h1><p class="error">{esc(exc.message)}</p>'
    return HTMLResponse(page(exc.code, body, session_of(request)), status_code=status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (301, 302, 303, 307, 308):
        return Response(status_code=exc.status_code, headers=exc.headers)
    return PlainTextResponse(f"{exc.detail}\n", status_code=exc.status_code, headers=exc.headers)


def build_app(settings: WebSettings) -> Starlette:
    sessions = SessionTable(settings.socket_path)
    feeds = BoardFeeds()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await feeds.close()
        await sessions.close()

    extra = frozenset({settings.host.strip("[]"), *(name.strip("[]").lower() for name in settings.allowed_hosts)})
    app = Starlette(routes=build_routes(), lifespan=lifespan,
                    middleware=[Middleware(GuardMiddleware, extra_hosts=extra)],
                    exception_handlers={MuxdError: _daemon_error, HTTPException: _http_error})
    app.state.sessions = sessions
    app.state.feeds = feeds
    limits = GuardLimits.from_env()
    app.state.rate_limiter = RateLimiter(limits.rate_per_s, limits.burst)
    return app
