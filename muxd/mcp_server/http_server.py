"""`muxd mcp --http HOST:PORT`: the SDK's streamable HTTP app under uvicorn, in this asyncio loop.

Every request needs `Authorization: Bearer <muxd token>` (401 with WWW-Authenticate
otherwise; 429 or 503 with Retry-After when the token cannot be checked now); each MCP call
runs through the daemon connection of its token (http_auth.py), so the daemon enforces that
token's tier and scope. `/metrics` serves Prometheus text, also
behind the bearer token. SIGINT/SIGTERM stop the server cleanly (exit 0).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TextIO

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.settings import AuthSettings
from starlette.authentication import AuthenticationError
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from muxd.daemon.access.call_metrics import prometheus_text
from muxd.errors import BadRequest, MuxdError
from muxd.mcp_server.http_auth import DaemonTokenVerifier
from muxd.mcp_server.http_listen import is_loopback, listen, serve_until_signalled
from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.link import acting_as, current_client
from muxd.mcp_server.middleware import acting_as_caller
from muxd.mcp_server.token_checks import TokenCheckUnavailable
from muxd.mcp_server.registry import ToolRegistry
from muxd.mcp_server.server import build_registry

MCP_PATH = "/mcp"
METRICS_PATH = "/metrics"
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MetricsSource = Callable[[ToolRegistry], Awaitable[str]]


def parse_listen_address(text: str) -> tuple[str, int]:
    """"127.0.0.1:8765" / "[::1]:0" / "localhost:8765" -> (host, port); a bad_request otherwise."""
    host, sep, port_text = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise BadRequest(f"--http wants HOST:PORT (port 0-65535, 0 picks a free one), got {text!r}", field="http")
    return host, int(port_text)


def served_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


async def local_metrics(registry: ToolRegistry) -> str:
    """This process's own per-tool metrics (what the calls through this server did)."""
    return prometheus_text(registry.guard.metrics)


async def daemon_metrics(registry: ToolRegistry) -> str:
    """The daemon's per-tool metrics (every MCP server's recorded calls), as the caller's principal;
    this process's own when the daemon has no metrics request."""
    try:
        from muxd.protocol.messages import GetMetrics  # type: ignore[attr-defined]
    except ImportError:
        return await local_metrics(registry)
    client = current_client()
    await registry.guard.announce(client)  # every tool of this server listed, called or not
    reply = await client.call(GetMetrics)
    text: str = reply.prometheus
    return text


def _unauthorized() -> Response:
    # The same answer as the SDK's RequireAuthMiddleware gives on /mcp.
    return JSONResponse({"error": "invalid_token", "error_description": "Authentication required"},
                        status_code=401,
                        headers={"WWW-Authenticate": 'Bearer error="invalid_token", '
                                                     'error_description="Authentication required"'})


def _not_checked(conn: HTTPConnection, exc: AuthenticationError) -> Response:
    """A bearer token that could not be checked now: 429 (too many waiting) or 503 (no daemon),
    with Retry-After. Starlette's default was a 400, which clients take as their own mistake."""
    if not isinstance(exc, TokenCheckUnavailable):
        return _unauthorized()
    return JSONResponse({"error": "temporarily_unavailable", "error_description": str(exc)},
                        status_code=exc.status, headers={"Retry-After": str(exc.retry_after_s)})


def _answer_unchecked_tokens(app: Any) -> None:
    """Have the SDK's AuthenticationMiddleware answer a token check that failed with `_not_checked`."""
    layers = [layer for layer in app.user_middleware if layer.cls is AuthenticationMiddleware]
    if len(layers) != 1:
        raise RuntimeError(f"expected the MCP SDK's one AuthenticationMiddleware, found {len(layers)}")
    layers[0].kwargs["on_error"] = _not_checked


def build_http_app(registry: ToolRegistry, *, host: str, metrics: MetricsSource = local_metrics) -> Any:
    """The Starlette app: the SDK's streamable HTTP endpoint at /mcp and /metrics beside it."""

    @registry.server.custom_route(METRICS_PATH, methods=["GET"])
    async def metrics_endpoint(request: Request) -> Response:
        user = request.scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            return _unauthorized()
        client = getattr(user.access_token, "daemon_client", None)
        if client is None:
            return _unauthorized()
        with acting_as(client):
            try:
                text = await metrics(registry)
            except MuxdError as exc:
                status = 403 if exc.code == "forbidden" else 502
                return PlainTextResponse(f"{exc.code}: {exc.message}\n", status_code=status)
        return PlainTextResponse(text, media_type=PROMETHEUS_CONTENT_TYPE)

    app = registry.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    _answer_unchecked_tokens(app)
    return app


async def serve_http(address: str, *, socket_path: str, limits: GuardLimits | None = None,
                     metrics: MetricsSource = daemon_metrics, err: TextIO = sys.stderr,
                     categories: Iterable[str] | None = None) -> int:
    """Serve MCP over streamable HTTP on `address` until SIGINT/SIGTERM; returns the exit code."""
    host, port = parse_listen_address(address)
    if not is_loopback(host):
        print(f"muxd mcp: warning: {host} is not a loopback address: the server is reachable from other "
              "machines, and bearer tokens cross the network in clear text (plain HTTP)", file=err, flush=True)
    verifier = DaemonTokenVerifier(socket_path)
    # AuthSettings wants an issuer; muxd issues its own tokens and serves no OAuth metadata.
    auth = AuthSettings(issuer_url=f"http://{'localhost' if is_loopback(host) else 'muxd.invalid'}",
                        resource_server_url=None)
    registry = build_registry(None, limits, auth=auth, token_verifier=verifier,
                              middleware=[acting_as_caller(verifier.forget)], categories=categories)
    app = build_http_app(registry, host=host, metrics=metrics)
    sock = listen(host, port)
    try:
        await serve_until_signalled(app, sock, lambda: print(f"muxd mcp: serving {served_url(sock)}", file=err,
                                                              flush=True))
    finally:
        await verifier.close()
        sock.close()
    return 0
