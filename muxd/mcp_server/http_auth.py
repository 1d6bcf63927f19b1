"""Bearer tokens of `muxd mcp --http`: a token is valid when the daemon greets a connection presenting it.

The daemon is the one place that knows tokens, so verifying one means opening a connection
with it (Hello{token}); that connection is then the one every MCP call of that token goes
through, so the daemon sees, and enforces, the token's principal. Connections are cached per
token, keyed by the token's sha256 (the token itself is never logged nor kept as a key), and
re-greeted every TOKEN_RECHECK_S so a revoked token stops working.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

from mcp.server.auth.provider import AccessToken
from pydantic import ConfigDict
from starlette.authentication import AuthenticationError

from muxd.client.connection import Client
from muxd.errors import ConnectionLost, MuxdError, ServerNotRunning, Timeout
from muxd.mcp_server.link import remember_token

log = logging.getLogger(__name__)

TOKEN_RECHECK_S = 10.0  # how long a greeted connection vouches for its token
# A refused token is refused again without asking the daemon for this long (a client retrying
# a wrong or revoked token costs no daemon connection per request); this many are remembered.
REFUSED_REMEMBER_S = 30.0
REFUSED_REMEMBERED_MAX = 4096
TOKEN_MAX_CHARS = 512
CLIENT_NAME = "muxd-mcp-http"
# Failures that say nothing about the token: the daemon could not be asked.
UNREACHABLE = (ServerNotRunning, ConnectionLost, Timeout)


def token_key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class MuxdAccessToken(AccessToken):
    """The SDK's AccessToken plus the daemon connection greeted with it (never serialised)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    daemon_client: Client | None = None
    principal: str = "system"


@dataclass
class _Entry:
    client: Client
    checked_at: float


class DaemonTokenVerifier:
    """The SDK's TokenVerifier: a token is good when the daemon's Hello accepts it."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self._entries: dict[str, _Entry] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._refused: OrderedDict[str, float] = OrderedDict()  # token sha256 -> when refused

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token or len(token) > TOKEN_MAX_CHARS:
            return None
        key = token_key(token)
        refused_at = self._refused.get(key)
        if refused_at is not None and time.monotonic() - refused_at < REFUSED_REMEMBER_S:
            return None
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # one Hello per token at a time, however many requests race
            entry = self._entries.get(key)
            if entry is None or time.monotonic() - entry.checked_at > TOKEN_RECHECK_S:
                entry = await self._greet(key, token, entry)
                if entry is None:
                    self._locks.pop(key, None)
                    return None
        welcome = entry.client.welcome
        principal = welcome.principal if welcome is not None else "system"
        # client_id ties the SDK's HTTP sessions to the token: another token cannot reuse them.
        return MuxdAccessToken(token=token, client_id=f"muxd:{key[:16]}", scopes=[],
                               daemon_client=entry.client, principal=principal)

    async def _greet(self, key: str, token: str, old: _Entry | None) -> _Entry | None:
        try:
            client = await Client.connect(self.socket_path, client_name=CLIENT_NAME, token=token)
        except UNREACHABLE as exc:
            log.warning("muxd mcp: cannot reach the daemon to check a token: %s", exc.message)
            raise AuthenticationError(f"the muxd daemon is unreachable: {exc.message}") from exc
        except MuxdError as exc:
            log.info("muxd mcp: token sha256:%s refused (%s)", key[:12], exc.code)
            self._entries.pop(key, None)
            self._refused[key] = time.monotonic()
            self._refused.move_to_end(key)
            while len(self._refused) > REFUSED_REMEMBERED_MAX:
                self._refused.popitem(last=False)
            if old is not None:
                await old.client.close()
            return None
        remember_token(client, token)
        entry = _Entry(client, time.monotonic())
        self._entries[key] = entry
        if old is not None:
            # Calls in flight on the old connection finish on the reader task; close it a bit later.
            asyncio.get_running_loop().call_later(TOKEN_RECHECK_S, lambda: asyncio.ensure_future(old.client.close()))
        return entry

    def forget(self, client: Client) -> None:
        """Drop a connection that failed (e.g. the daemon restarted): the next request greets again."""
        for key, entry in list(self._entries.items()):
            if entry.client is client:
                del self._entries[key]

    async def close(self) -> None:
        entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            await entry.client.close()
