"""What every state-changing request of the web view passes, declared once: `action(path, do)`
makes the POST route. Before `do` runs: a session (else a redirect to /login), its CSRF token in
the form (or the X-CSRF-Token header) — the Origin check ran already (security.py) — and the
principal's rate for that action (MCP's per-tool rate: MUXD_MCP_RATE, MUXD_MCP_BURST). After it:
one audit record, sent to the daemon as an MCP server sends one per tool call (tool `web.<name>`,
the form's fields only as their sha256), so `muxd` audit and metrics list what browsers did.

`do(request, session, form)` acts through `await daemon_link(request)` and returns a Response;
a MuxdError it raises (forbidden, not_found, …) answers with its code and message.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from muxd.errors import MuxdError
from muxd.rate_limit import RateLimiter
from muxd.mcp_server.audit_records import audit_record, send_audit_record
from muxd.web.security import CSRF_FIELD, CSRF_HEADER, same_token
from muxd.web.sessions import WebSession, require_session

Action = Callable[[Request, WebSession, FormData], Awaitable[Response]]
AUDIT_PREFIX = "web."
# A MuxdError's code -> the HTTP status a browser gets.
STATUS_OF_CODE = {"forbidden": 403, "unauthorized": 403, "not_found": 404, "bad_request": 400,
                  "rate_limited": 429, "conflict": 409, "server_not_running": 503}
_ACTION_ROUTES: set[int] = set()  # id() of every Route made here: routes.py checks each POST is one


def wants_json(request: Request) -> bool:
    """A page's script (fetch, with the header) rather than a plain form post."""
    return CSRF_HEADER in request.headers


def refusal(request: Request, status: int, code: str, message: str) -> Response:
    if wants_json(request):
        return JSONResponse({"ok": False, "code": code, "message": message}, status_code=status)
    return PlainTextResponse(f"{code}: {message}\n", status_code=status)


def done(request: Request, message: str, back: str = "/") -> Response:
    """An action's success: JSON for a script, else back to the page it came from."""
    if wants_json(request):
        return JSONResponse({"ok": True, "message": message})
    return RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/", status_code=303)


def action(path: str, name: str, do: Action) -> Route:
    """The POST route at `path` running `do` under the checks above; audited as `web.<name>`."""

    async def endpoint(request: Request) -> Response:
        session = require_session(request)
        form = await request.form()
        given = request.headers.get(CSRF_HEADER) or _text(form.get(CSRF_FIELD))
        if not same_token(given, session.csrf):
            return refusal(request, 403, "forbidden", "refused: the form's CSRF token is missing or wrong")
        started = time.monotonic()
        error_code: str | None = None
        try:
            limiter: RateLimiter = request.app.state.rate_limiter
            limiter.check(session.principal, AUDIT_PREFIX + name)  # as MCP's guards limit a tool
            return await do(request, session, form)
        except MuxdError as exc:
            error_code = exc.code
            return refusal(request, STATUS_OF_CODE.get(exc.code, 500), exc.code, exc.message)
        finally:
            args = {k: v for k, v in form.items() if k != CSRF_FIELD and isinstance(v, str)}
            record = audit_record(AUDIT_PREFIX + name, args, error_code, 0, (time.monotonic() - started) * 1000.0)
            if not session.client.closed:
                send_audit_record(session.client, record)

    route = Route(path, endpoint, methods=["POST"], name=f"web.{name}")
    _ACTION_ROUTES.add(id(route))
    return route


def is_action(route: Any) -> bool:
    return id(route) in _ACTION_ROUTES


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


