"""Bearer tokens of `muxd mcp --http`: a token is valid when the daemon greets a connection presenting it.

The daemon is the one place that knows tokens, so verifying one means opening a connection
with it (Hello{token}); that connection is then the one every MCP call of that token goes
through, so the daemon sees, and enforces, the token's principal. Connections are cached per
token, keyed by the token's sha256 (the token itself is never logged nor kept as a key), and
re-greeted when the daemon closed it (it closes a token's connections when it revokes the
token, so a revoked token stops working at once, list_tools included) and every
TOKEN_RECHECK_S (a daemon that restarted, say).

Anyone who can reach the port can send made-up tokens, so refusing one is cheap and never
delays a real one: a string not shaped like a muxd token is refused without asking the daemon;
a token not seen before is looked up first, by its sha256, in the daemon's table (batched with
the others waiting, one request at a time: token_checks.py), and only a live one gets a
connection; tokens the daemon said are live are remembered and skip the lookup; a refused
token is refused again from memory for a while; refusals are logged as one line per interval.
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

from muxd.client.connection import Client
from muxd.config import MCP_KNOWN_TOKENS_MAX, REFUSED_TOKEN_LOG_INTERVAL_S
from muxd.errors import MuxdError, Unauthorized
from muxd.mcp_server.link import remember_token
from muxd.mcp_server.token_checks import (  # noqa: F401 - TOKEN_SECRET_CHARS: named here too
    NO_DAEMON, TOKEN_SECRET_CHARS, TOKEN_SHAPE, UNREACHABLE, TokenCheckUnavailable, TokenChecks, unreachable,
)
from muxd.sampled_log import SampledLog

log = logging.getLogger(__name__)

TOKEN_RECHECK_S = 10.0  # how long a greeted connection vouches for its token
# A refused token is refused again without asking the daemon for this long (a client retrying
# a wrong or revoked token costs no daemon connection per request); this many are remembered.
REFUSED_REMEMBER_S = 30.0
REFUSED_REMEMBERED_MAX = 4096
CLIENT_NAME = "muxd-mcp-http"


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
        self._known: OrderedDict[str, None] = OrderedDict()  # token sha256s the daemon welcomed
        self._checks = TokenChecks(socket_path)
        self._refusals = SampledLog(log, logging.WARNING, "muxd mcp: refused a bearer token",
                                    interval_s=REFUSED_TOKEN_LOG_INTERVAL_S)
        self._unreachable = SampledLog(log, logging.WARNING, "muxd mcp: cannot reach the daemon to check a token",
                                       interval_s=REFUSED_TOKEN_LOG_INTERVAL_S)

    async def verify_token(self, token: str) -> AccessToken | None:
        if not TOKEN_SHAPE.fullmatch(token):
            self._refusals.event(" (not shaped like a muxd token)")
            return None
        key = token_key(token)
        refused_at = self._refused.get(key)
        if refused_at is not None and time.monotonic() - refused_at < REFUSED_REMEMBER_S:
            return None
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:  # one Hello per token at a time, however many requests race
                entry = self._entries.get(key)
                if entry is None or entry.client.hung_up() or time.monotonic() - entry.checked_at > TOKEN_RECHECK_S:
                    entry = await self._greet(key, token, entry)
        finally:
            if key not in self._entries:  # no lock kept per token nobody holds
                self._locks.pop(key, None)
        if entry is None:
            return None
        welcome = entry.client.welcome
        principal = welcome.principal if welcome is not None else "system"
        # client_id ties the SDK's HTTP sessions to the token: another token cannot reuse them.
        return MuxdAccessToken(token=token, client_id=f"muxd:{key[:16]}", scopes=[],
                               daemon_client=entry.client, principal=principal)

    async def _greet(self, key: str, token: str, old: _Entry | None) -> _Entry | None:
        # A token never welcomed may be one of a flood of made-up ones: the daemon's table says
        # first, without a connection of its own; a known one goes straight to its Hello.
        try:
            if key not in self._known and not await self._checks.is_live(key):
                raise Unauthorized("unknown or revoked token")  # as the daemon's Hello would answer
            client = await Client.connect(self.socket_path, client_name=CLIENT_NAME, token=token)
        except UNREACHABLE as exc:
            self._unreachable.event(f": {exc.message}")
            raise unreachable(exc) from exc
        except TokenCheckUnavailable as exc:
            if exc.status == NO_DAEMON:
                self._unreachable.event(f": {exc}")
            raise
        except MuxdError as exc:
            self._refuse(key, exc.code)
            if old is not None:
                await old.client.close()
            return None
        remember_token(client, token)
        entry = _Entry(client, time.monotonic())
        self._entries[key] = entry
        self._known[key] = None
        self._known.move_to_end(key)
        while len(self._known) > MCP_KNOWN_TOKENS_MAX:
            self._known.popitem(last=False)
        if old is not None:
            # Calls in flight on the old connection finish on the reader task; close it a bit later.
            asyncio.get_running_loop().call_later(TOKEN_RECHECK_S, lambda: asyncio.ensure_future(old.client.close()))
        return entry

    def _refuse(self, key: str, why: str) -> None:
        self._refusals.event(f" (sha256:{key[:12]}, {why})")
        self._entries.pop(key, None)
        self._known.pop(key, None)
        self._refused[key] = time.monotonic()
        self._refused.move_to_end(key)
        while len(self._refused) > REFUSED_REMEMBERED_MAX:
            self._refused.popitem(last=False)

    def forget(self, client: Client) -> None:
        """Drop a connection that failed (e.g. the daemon restarted): the next request greets again."""
        for key, entry in list(self._entries.items()):
            if entry.client is client:
                del self._entries[key]

    async def close(self) -> None:
        self._refusals.flush()
        self._unreachable.flush()
        await self._checks.close()
        entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            await entry.client.close()
