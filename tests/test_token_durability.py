"""An acknowledged token change is a stored one: under a database another process holds, `token
revoke`, `token create` and `grant` answer store_unavailable and change nothing (a revoked admin
token used to work again after a restart); `kill -9` right after acknowledged changes loses none.
A new pane does not wait for the store: its own token lives for the run only."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from muxd.config import DB_BUSY_TIMEOUT_S
from muxd.errors import MuxdError, NotFound, StoreUnavailable, Unauthorized
from muxd.protocol.messages import CreateToken, GrantPane, ListPanes, RevokeGrant, RevokeToken
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

CHANGES_UNDER_KILL = 40
REVOKED_UNDER_KILL = 30
SCENARIO_TIMEOUT_S = 120.0


@contextmanager
def held(server: MuxdTestServer) -> Iterator[None]:
    """Another process (this test's) holds the daemon's database: BEGIN EXCLUSIVE until the end."""
    other = sqlite3.connect(server.env["MUXD_DB"], isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


async def _works(server: MuxdTestServer, secret: str) -> bool:
    """Whether `secret` is a token the daemon takes now."""
    try:
        client = await server.client(token=secret)
    except Unauthorized:
        return False
    try:
        await client.call(ListPanes)
        return True
    finally:
        await client.close()


async def _answers(calls: list[Any]) -> list[Any]:
    """The replies, or the errors, of calls made at once."""
    return await asyncio.gather(*calls, return_exceptions=True)


def _tokens(server: MuxdTestServer) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in json.loads(server.cli("token", "ls", "--all", "--json", check=True).stdout)}


def _restart(server: MuxdTestServer, *, kill: bool = False) -> None:
    if kill:
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
    else:
        server.cli("kill-server", check=True)
    wait_until(lambda: not server.running(), timeout=15, message="the daemon gone")
    server.start()


def test_a_locked_database_refuses_token_changes_and_leaves_them_as_they_were(held_db_server: MuxdTestServer) -> None:
    server = held_db_server
    boss = server.cli("token", "create", "--tier", "admin", "--name", "boss", check=True).stdout.strip()
    server.cli("new-session", "-d", "-s", "s", "--", "sleep", "600", check=True)
    server.cli("new-window", "-d", "-t", "s", "--", "sleep", "600", check=True)
    first, second = (p["id"] for p in server.panes("s"))

    async def under_lock() -> str:
        owner = await server.client()
        try:
            with held(server):
                replies = await _answers([owner.call(RevokeToken, token="boss"),
                                          owner.call(CreateToken, tier="view_only", name="newcomer"),
                                          owner.call(GrantPane, pane=second, to=first)])
                for reply, doing in zip(replies, ("revoking token boss", "creating token newcomer",
                                                  f"granting {second} to agent:{first}")):
                    assert isinstance(reply, StoreUnavailable), reply
                    assert reply.message == f"the database is locked: {doing}: database is locked"
                # Nothing changed: the admin token still works, no newcomer, no grant.
                assert await _works(server, boss)
                tokens = _tokens(server)
                assert tokens["boss"]["revoked_at"] is None and "newcomer" not in tokens
                try:
                    await owner.call(RevokeGrant, pane=second, to=first)
                except NotFound as exc:
                    assert "is not granted" in exc.message
                else:
                    raise AssertionError("the grant that failed to store is in memory")
                # A pane starts all the same: its own token is usable at once (stored when it can be).
                server.cli("new-window", "-d", "-t", "s", "--", "sleep", "600", check=True)
                third = server.panes("s")[-1]["id"]
                assert _tokens(server)[f"agent:{third}"]["revoked_at"] is None
            # The lock gone: the same requests are stored, and answered.
            revoked = (await owner.call(RevokeToken, token="boss")).token
            assert revoked.revoked_at is not None and not await _works(server, boss)
            created = await owner.call(CreateToken, tier="view_only", name="newcomer")
            assert (await owner.call(GrantPane, pane=second, to=first)).token.name == f"agent:{first}"
            assert await _works(server, created.secret)
        finally:
            await owner.close()
        return created.secret

    newcomer = asyncio.run(patient_wait_for(under_lock(), SCENARIO_TIMEOUT_S + 4 * DB_BUSY_TIMEOUT_S))
    _restart(server)
    # What was acknowledged, and nothing else: the revoked admin token stays revoked.
    assert not asyncio.run(_works(server, boss))
    assert asyncio.run(_works(server, newcomer))
    tokens = _tokens(server)
    assert tokens["boss"]["revoked_reason"] == "revoked by request" and tokens["newcomer"]["revoked_at"] is None


def test_kill_9_right_after_acknowledged_changes_loses_none(muxd_server: MuxdTestServer) -> None:
    server = muxd_server

    async def create() -> list[str]:
        owner = await server.client()
        try:
            replies = await _answers([owner.call(CreateToken, tier="view_only", name=f"t{n}")
                                      for n in range(CHANGES_UNDER_KILL)])
        finally:
            await owner.close()
        assert not [r for r in replies if isinstance(r, MuxdError)]
        return [r.secret for r in replies]

    async def revoke() -> None:
        owner = await server.client()
        try:
            replies = await _answers([owner.call(RevokeToken, token=f"t{n}") for n in range(REVOKED_UNDER_KILL)])
        finally:
            await owner.close()
        assert not [r for r in replies if isinstance(r, MuxdError)]

    async def working(secrets: list[str]) -> list[bool]:
        return [await _works(server, secret) for secret in secrets]

    secrets = asyncio.run(create())
    _restart(server, kill=True)  # right after the last answer
    assert asyncio.run(working(secrets)) == [True] * CHANGES_UNDER_KILL
    asyncio.run(revoke())
    _restart(server, kill=True)
    still = asyncio.run(working(secrets))
    assert still == [False] * REVOKED_UNDER_KILL + [True] * (CHANGES_UNDER_KILL - REVOKED_UNDER_KILL)
