"""Revoking a token closes the daemon connections greeted with it, at once: before the revoke's
answer goes out, unless the token revokes itself, whose request still gets its answer; other
connections are untouched."""

from __future__ import annotations

import asyncio

from muxd.protocol.messages import CreateToken, ListPanes, RevokeToken
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until


async def _scenario(server: MuxdTestServer) -> None:
    owner = await server.client()
    try:
        leaving = (await owner.call(CreateToken, tier="admin", name="leaving")).secret
        staying = (await owner.call(CreateToken, tier="view_only", name="staying")).secret
        held = await server.client(token=leaving)
        itself = await server.client(token=leaving)
        other = await server.client(token=staying)
        assert (await held.call(ListPanes)).panes == [] and not held.closed
        # A token revoking itself: the answer arrives before the connection closes.
        revoked = (await itself.call(RevokeToken, token="leaving")).token
        assert revoked.revoked_at is not None

        async def both_closed() -> bool:
            return held.closed and itself.closed

        await async_wait_until(both_closed, timeout=5, message="the revoked token's connections closed")
        assert not other.closed and (await other.call(ListPanes)).panes == []
        # Revoked by someone else: its connection has ended by the time the revoke's answer
        # arrives, with no loop step in between for the daemon or for us.
        await owner.call(RevokeToken, token="staying")
        assert other.hung_up()
        for client in (held, itself, other):
            await client.close()
    finally:
        await owner.close()


def test_revoking_a_token_closes_its_connections(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_scenario(muxd_server), timeout=20))
