"""Whether bearer tokens are live tokens, asked of the daemon in batches over one connection.

A token `muxd mcp --http` has not seen may be one of a flood of made-up ones. Greeting the daemon
with each (a connection and a Hello apiece) made the flood costly, and rationing those greetings
made real tokens wait for a share of the ration. Instead its sha256 joins the next check-tokens
request, sent over one connection of the socket owner: one request in flight at a time, and all
that wait go in the next one. A real token waits for two round trips at most, however many
made-up ones arrive with it; the flood costs the daemon a dictionary lookup per token.
"""

from __future__ import annotations

import asyncio
import math
import re

from starlette.authentication import AuthenticationError

from muxd.client.connection import Client
from muxd.config import TOKEN_CHECK_BATCH_MAX, TOKEN_CHECK_RETRY_AFTER_S, TOKEN_CHECK_TIMEOUT_S, TOKEN_SECRET_BYTES
from muxd.daemon.access.control import TOKEN_PREFIX
from muxd.errors import ConnectionLost, MuxdError, ServerNotRunning, Timeout
from muxd.protocol.access_messages import CheckTokens

# What daemon/access/control.py create_token makes: the prefix, then url-safe base64 (unpadded) of the
# secret. A string of another shape is refused without asking the daemon (`muxd mcp --http`, `muxd web`).
TOKEN_SECRET_CHARS = math.ceil(TOKEN_SECRET_BYTES * 4 / 3)
TOKEN_SHAPE = re.compile(rf"{re.escape(TOKEN_PREFIX)}[A-Za-z0-9_-]{{{TOKEN_SECRET_CHARS}}}")

CLIENT_NAME = "muxd-mcp-http-token-checks"
# Failures that say nothing about a token: the daemon could not be asked.
UNREACHABLE = (ServerNotRunning, ConnectionLost, Timeout)
TOO_MANY_WAITING = 429
NO_DAEMON = 503


class TokenCheckUnavailable(AuthenticationError):
    """A bearer token that cannot be checked now: `status` says why (429, 503), `retry_after_s` when to retry."""

    def __init__(self, message: str, *, status: int, retry_after_s: int = TOKEN_CHECK_RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


def unreachable(exc: MuxdError) -> TokenCheckUnavailable:
    return TokenCheckUnavailable(f"the muxd daemon is unreachable: {exc.message}", status=NO_DAEMON)


class TokenChecks:
    """`await is_live(sha256)`: the daemon's word on one token, asked together with the others waiting."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self._waiting: dict[str, asyncio.Future[bool]] = {}
        self._client: Client | None = None
        self._sender: asyncio.Task[None] | None = None

    async def is_live(self, key: str) -> bool:
        """Whether the token whose sha256 is `key` is live; TokenCheckUnavailable when that cannot be asked."""
        future = self._waiting.get(key)
        if future is None:
            if len(self._waiting) >= TOKEN_CHECK_BATCH_MAX:
                raise TokenCheckUnavailable(f"{len(self._waiting)} tokens wait to be checked; retry",
                                            status=TOO_MANY_WAITING)
            future = asyncio.get_running_loop().create_future()
            self._waiting[key] = future
            if self._sender is None or self._sender.done():
                self._sender = asyncio.get_running_loop().create_task(self._send())
        return await asyncio.shield(future)  # a caller that gives up must not cancel the others' answer

    async def _send(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, {}
            try:
                answers = await self._ask(list(batch))
            except TokenCheckUnavailable as exc:
                for future in batch.values():
                    future.set_exception(exc)
                    future.exception()  # retrieved here too: a waiter that left must not leave a warning
                continue
            for future, live in zip(batch.values(), answers):
                future.set_result(live)

    async def _ask(self, keys: list[str]) -> list[bool]:
        try:
            if self._client is None or self._client.closed:
                self._client = await Client.connect(self.socket_path, client_name=CLIENT_NAME)
            reply = await asyncio.wait_for(self._client.call(CheckTokens, token_sha256=keys), TOKEN_CHECK_TIMEOUT_S)
        except asyncio.TimeoutError:
            await self._drop_client()
            raise unreachable(Timeout(f"no answer in {TOKEN_CHECK_TIMEOUT_S:.0f} s")) from None
        except UNREACHABLE as exc:
            await self._drop_client()
            raise unreachable(exc) from exc
        except MuxdError as exc:  # the daemon would not say (forbidden: not the socket owner's)
            raise TokenCheckUnavailable(f"the muxd daemon cannot check tokens: {exc.message}",
                                        status=NO_DAEMON) from exc
        live: list[bool] = reply.live
        if len(live) != len(keys):
            raise TokenCheckUnavailable("the muxd daemon answered another number of tokens", status=NO_DAEMON)
        return live

    async def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
        await self._drop_client()
