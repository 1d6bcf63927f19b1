"""The web view's route table: every page module's `ROUTES`, in one list (as the CLI's table).

How a page module adds its pages (H4, H5 and later ones):

    # muxd/web/pages_things.py
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route
    from muxd.web.actions import action, done
    from muxd.web.html import esc, page, post_form
    from muxd.web.sessions import daemon_link, require_session

    async def things(request: Request) -> HTMLResponse:
        client = await daemon_link(request)   # the session's daemon connection (its token's
        session = require_session(request)    # principal); no session: a redirect to /login
        reply = await client.call(ListThings)  # the daemon checks tier and scope, as for MCP
        return HTMLResponse(page("Things", "".join(f"<p>{esc(t.name)}</p>" for t in reply.things),
                                 session, current="/things"))

    async def approve(request, session, form):  # CSRF checked and the call audited by action()
        await (await daemon_link(request)).call(ApproveThing, id=form["id"])
        return done(request, "approved", back="/things")

    ROUTES = [Route("/things", things), action("/things/approve", "approve_thing", approve)]

then add the module to PAGE_MODULES below. Every value put in HTML goes through `esc` (html.py);
every POST is made with `action()` (build_routes refuses any other); scripts go in static/app.js
(the CSP forbids inline ones); `page(..., current=path)` marks the page in the navigation (html.NAV).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from muxd.web.actions import is_action

STATIC_DIR = Path(__file__).parent / "static"
# The modules whose ROUTES make the app, in order (the first route that matches a path serves it).
PAGE_MODULES: tuple[str, ...] = (
    "muxd.web.pages_login",
    "muxd.web.pages_agents",
    "muxd.web.pages_pane",  # /pane/N: a pane's screen, live, and its input box
    "muxd.web.pages_history",  # /history, /execution/ID, /failures
    "muxd.web.pages_tasks",  # /tasks, /task/{id}, its review
    "muxd.web.pages_charts",  # /charts
)
# The one POST that cannot carry a session's CSRF token: it makes the session (pages_login.py).
SESSIONLESS_POSTS = frozenset({"/login"})


def build_routes() -> list[BaseRoute]:
    """Every page module's routes, then /static; a POST route not made by `action()` is a bug."""
    routes: list[BaseRoute] = []
    for name in PAGE_MODULES:
        routes += import_module(name).ROUTES
    for route in routes:
        if isinstance(route, Route) and "POST" in (route.methods or ()) and route.path not in SESSIONLESS_POSTS \
                and not is_action(route):
            raise RuntimeError(f"POST {route.path} is not made by muxd.web.actions.action (CSRF, audit)")
    routes.append(Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"))
    return routes
