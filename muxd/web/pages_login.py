"""GET/POST /login and POST /logout: a browser becomes (and stops being) a muxd token.

The login form takes the token a `muxd token create` printed; the daemon's Hello decides
(sessions.py). The login POST has no session yet, hence no CSRF token: the Origin check
(security.py) and the SameSite=Strict cookie stop a cross-site login.
"""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from muxd.errors import MuxdError
from muxd.web.actions import action
from muxd.web.html import esc, page
from muxd.web.sessions import SESSION_IDLE_S, WebSession, cookie_name, session_of, table_of

LOGIN_TOKEN_MAX_CHARS = 512  # a muxd token is ~48; anything longer is not one


def login_page(message: str = "") -> str:
    said = f'<p class="error" role="alert">{esc(message)}</p>' if message else ""
    return page("Log in", (
        '<section class="login"><h1>muxd</h1>'
        "<p>Log in with a muxd token (<code>muxd token create --tier execute_advanced --name web</code> "
        "prints one; a <code>view_only</code> token can watch but not act).</p>"
        f"{said}"
        '<form method="post" action="/login">'
        '<label for="token">Token</label>'
        '<input id="token" name="token" type="password" autocomplete="off" autofocus required>'
        '<button type="submit" id="login">Log in</button></form></section>'), None)


async def show_login(request: Request) -> Response:
    if session_of(request) is not None:
        return RedirectResponse("/", status_code=303)
    return HTMLResponse(login_page())


async def log_in(request: Request) -> Response:
    form = await request.form(max_files=0, max_fields=4)
    token = form.get("token")
    if not isinstance(token, str) or len(token) > LOGIN_TOKEN_MAX_CHARS:
        return HTMLResponse(login_page("that is not a muxd token"), status_code=400)
    try:
        session = await table_of(request).login(token)
    except MuxdError as exc:
        status = 429 if exc.code == "rate_limited" else 503 if exc.code == "server_not_running" else 403
        return HTMLResponse(login_page(f"{exc.code}: {exc.message}"), status_code=status)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(cookie_name(request), session.id, max_age=int(SESSION_IDLE_S), path="/", httponly=True,
                        samesite="strict")
    return response


async def log_out(request: Request, session: WebSession, form: FormData) -> Response:
    await table_of(request).logout(session)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(cookie_name(request), path="/", httponly=True, samesite="strict")
    return response


ROUTES: list[Route] = [
    Route("/login", show_login, methods=["GET"]),
    Route("/login", log_in, methods=["POST"]),
    action("/logout", "logout", log_out),
]
