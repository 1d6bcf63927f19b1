"""Who a browser is: the muxd token it logged in with, and the daemon connection greeted with it.

A login opens a daemon connection presenting the token (the daemon's Hello is the only check of
a token there is); the session keeps the token and that connection, keyed by a random id that
the browser holds in the `muxd_session_<port>` cookie (HttpOnly, SameSite=Strict, Path=/). Every page
asks `await daemon_link(request)` for the connection: its requests run as the token's principal,
so what the page shows and may do is what the daemon allows that token. A connection the daemon
closed (it restarted; it closes a revoked token's connections) is greeted again with the token
on the next request, and a token it now refuses ends the session.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection

from muxd.client.connection import Client
from muxd.daemon.access.tiers import tier_rank
from muxd.errors import RateLimited, Unauthorized
from muxd.mcp_server.token_checks import TOKEN_SHAPE
from muxd.rate_limit import TokenBucket
from muxd.web.security import new_csrf_token

# A browser keeps one cookie jar per host name, whatever the port: two `muxd web` on one machine
# (two daemons, or two `ssh -L` tunnels) would overwrite each other's session under one name. The
# cookie is named after the port the browser reached this server by (cookie_name).
COOKIE_PREFIX = "muxd_session_"
SESSION_ID_BYTES = 32
SESSION_IDLE_S = 12 * 3600.0  # a browser unused this long logs in again
SESSIONS_MAX = 256            # past this, the longest unused session ends
# Logins that reach the daemon (a Hello each): a page guessing tokens costs it this much at most.
LOGINS_PER_S = 2.0
LOGIN_BURST = 10
CLIENT_NAME = "muxd-web"
# The tier the daemon asks for typing into a pane (send-keys is moderate: access/tiers.py).
ACTING_TIER = "execute_advanced"


class NotLoggedIn(HTTPException):
    """No session (or one that ended): a page answers with the login page instead."""

    def __init__(self) -> None:
        super().__init__(status_code=303, headers={"Location": "/login"})


@dataclass
class WebSession:
    id: str
    token: str = field(repr=False)
    client: Client
    csrf: str = field(default_factory=new_csrf_token, repr=False)
    last_seen: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Set when the session ends (logout, idle, revoked, crowded out): its open event streams close.
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def principal(self) -> str:
        return self.client.welcome.principal if self.client.welcome is not None else "system"

    @property
    def tier(self) -> str:
        return self.client.welcome.tier if self.client.welcome is not None else "admin"

    @property
    def scopes(self) -> frozenset[str] | None:
        """The token's scopes as the daemon's greeting said them (None: a daemon too old to say)."""
        scopes = self.client.welcome.scopes if self.client.welcome is not None else None
        return None if scopes is None else frozenset(scopes)

    @property
    def can_act(self) -> bool:
        """Whether the daemon would let this token type into a pane (pages hide what it would refuse)."""
        return tier_rank(self.tier) >= tier_rank(ACTING_TIER)

    @property
    def token_key(self) -> str:
        """The token's sha256: what shared feeds are keyed by (the token itself is kept nowhere else)."""
        return hashlib.sha256(self.token.encode()).hexdigest()


class SessionTable:
    """The logged-in browsers of one `muxd web`, and the daemon they reach."""

    def __init__(self, socket_path: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.socket_path = socket_path
        self._clock = clock
        self._sessions: OrderedDict[str, WebSession] = OrderedDict()
        self._logins = TokenBucket(LOGINS_PER_S, LOGIN_BURST, clock)

    async def login(self, token: str) -> WebSession:
        """A new session for `token`; Unauthorized when the daemon refuses it (or it is not a token)."""
        token = token.strip()
        if not TOKEN_SHAPE.fullmatch(token):
            raise Unauthorized("that is not a muxd token (muxd token create prints one)")
        wait_s = self._logins.take()
        if wait_s:
            raise RateLimited(f"too many logins: try again in {wait_s:.0f} s", retry_after_s=wait_s)
        client = await self.connect(token)
        session = WebSession(id=secrets.token_urlsafe(SESSION_ID_BYTES), token=token, client=client)
        self._sessions[session.id] = session
        while len(self._sessions) > SESSIONS_MAX:
            _, oldest = self._sessions.popitem(last=False)
            await self._end(oldest)
        return session

    async def connect(self, token: str, on_event: Callable[[Any], None] | None = None) -> Client:
        """A daemon connection presenting `token` (ServerNotRunning, Unauthorized as the daemon says)."""
        return await Client.connect(self.socket_path, client_name=CLIENT_NAME, token=token, on_event=on_event)

    def get(self, session_id: str | None) -> WebSession | None:
        """The live session of that id, now marked used; None when there is none (or it idled out)."""
        session = self._sessions.get(session_id or "")
        if session is None:
            return None
        now = self._clock()
        if now - session.last_seen > SESSION_IDLE_S:
            asyncio.ensure_future(self._end(session))
            return None
        session.last_seen = now
        self._sessions.move_to_end(session.id)
        return session

    async def logout(self, session: WebSession) -> None:
        await self._end(session)

    async def _end(self, session: WebSession) -> None:
        self._sessions.pop(session.id, None)
        session.ended.set()
        await session.client.close()

    async def link(self, session: WebSession) -> Client:
        """The session's daemon connection, greeted again if the daemon closed it; NotLoggedIn when
        the daemon no longer takes the token (revoked), ServerNotRunning when no daemon answers."""
        async with session.lock:
            if session.client.closed:
                try:
                    session.client = await self.connect(session.token)
                except Unauthorized:
                    await self._end(session)
                    raise NotLoggedIn() from None
            return session.client

    def __len__(self) -> int:
        return len(self._sessions)

    async def close(self) -> None:
        for session in list(self._sessions.values()):
            await self._end(session)


def table_of(conn: HTTPConnection) -> SessionTable:
    table: SessionTable = conn.app.state.sessions
    return table


def cookie_name(conn: HTTPConnection) -> str:
    """The session cookie's name for this server: muxd_session_<the port in the request's Host>
    (the browser's side of a tunnel; 80 when the Host names none)."""
    return f"{COOKIE_PREFIX}{conn.url.port or 80}"


def session_of(conn: HTTPConnection) -> WebSession | None:
    """The request's session (from its cookie), or None."""
    return table_of(conn).get(conn.cookies.get(cookie_name(conn)))


def require_session(conn: HTTPConnection) -> WebSession:
    session = session_of(conn)
    if session is None:
        raise NotLoggedIn()
    return session


async def daemon_link(conn: HTTPConnection) -> Client:
    """The daemon connection of the request's session: every call through it acts as the token
    the browser logged in with. Raises NotLoggedIn (a redirect to /login) without a session."""
    return await table_of(conn).link(require_session(conn))

