"""What every response of the web view carries and every state-changing request must show.

- A strict Content-Security-Policy (no inline script or style, nothing from elsewhere, no
  framing) and its companions, on every response.
- The Host header must name this machine's loopback (or the address `muxd web --host` gave):
  a page on another site whose name an attacker points at 127.0.0.1 (DNS rebinding) is refused.
- Every request but GET/HEAD must come from a page of this origin (Origin, else Referer, equal
  to http://<Host>) and carry the session's CSRF token (a form field or X-CSRF-Token): a forged
  cross-site request fails either check with a 403 of one line.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'")
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
CSRF_TOKEN_BYTES = 32
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def new_csrf_token() -> str:
    return secrets.token_urlsafe(CSRF_TOKEN_BYTES)


def same_token(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def host_name(host_header: str) -> str:
    """"127.0.0.1:8765" -> "127.0.0.1"; "[::1]:80" -> "::1"; "" for a malformed one."""
    try:
        return urlsplit(f"http://{host_header}").hostname or ""
    except ValueError:
        return ""


def allowed_host(host_header: str, extra: frozenset[str]) -> bool:
    """Whether a request's Host names this server: loopback by any port (`ssh -L 9000:…` keeps the
    browser's port), or one of `extra` (the --host given)."""
    name = host_name(host_header)
    return bool(name) and (name in LOOPBACK_NAMES or name in extra)


def same_origin(headers: dict[str, str]) -> bool:
    """Whether a state-changing request came from a page of the origin it is sent to: its Origin,
    else (older browsers, some navigations) its Referer, is http://<its Host>."""
    host = headers.get("host", "")
    served = f"http://{host}"
    origin = headers.get("origin")
    if origin is not None:
        return origin == served
    referer = headers.get("referer")
    if referer is None:
        return False
    parts = urlsplit(referer)
    return f"{parts.scheme}://{parts.netloc}" == served


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}


class GuardMiddleware:
    """ASGI middleware: the Host and Origin checks, and the security headers on every answer.
    (The CSRF token needs the session: routes.action checks it.)"""

    def __init__(self, app: Any, *, extra_hosts: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.extra_hosts = extra_hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if not allowed_host(headers.get("host", ""), self.extra_hosts):
            await _refuse(send, 421, "this server answers only for its loopback address")
            return
        if scope["method"] not in SAFE_METHODS and not same_origin(headers):
            await _refuse(send, 403, "refused: the request did not come from this site's pages")
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _refuse(send: Any, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": (text + "\n").encode()})
