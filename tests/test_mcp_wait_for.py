"""wait_for through the real stdio client: a shell pane's states, a regex, a timeout, an exit."""

from __future__ import annotations

import asyncio

from muxd.mcp_server.testing import call_error, call_ok, mcp_session
from muxd.testing.server import MuxdTestServer

WAIT_KEYS = {"pane_id", "matched", "reason", "state", "elapsed_s", "summary"}


async def _drive(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        pane = await call_ok(session, "create_pane", command=["bash", "--norc"], name="sh", env={"PS1": "$ "})
        pane_id = pane["id"]
        ready = await call_ok(session, "wait_for", pane_id="sh", state="Idle", timeout_s=10)
        assert set(ready) == WAIT_KEYS and ready["matched"] and ready["pane_id"] == pane_id

        # A command runs (a non-shell foreground program: Unknown), then the shell is back (Idle).
        await call_ok(session, "send_input", pane_id=pane_id, text="sleep 1; echo done-$((2+3))", submit=True)
        busy = await call_ok(session, "wait_for", pane_id=pane_id, state=["Unknown", "Thinking"], timeout_s=10)
        assert busy["matched"] and busy["reason"] == "state" and busy["state"] == "Unknown"
        idle = await call_ok(session, "wait_for", pane_id=pane_id, state="Idle", timeout_s=10)
        assert idle["matched"] and idle["reason"] == "state" and idle["state"] == "Idle"
        assert 0 < idle["elapsed_s"] < 10 and idle["summary"]["activity"]["state"] == "Idle"

        found = await call_ok(session, "wait_for", pane_id=pane_id, pattern=r"^done-\d+$", timeout_s=5)
        assert found["matched"] and found["reason"] == "pattern" and found["line"] == "done-5"

        missed = await call_ok(session, "wait_for", pane_id=pane_id, state="AwaitingConfirmation", timeout_s=0.3)
        assert not missed["matched"] and missed["reason"] == "timed_out" and missed["elapsed_s"] >= 0.3

        for bad in ({"state": "Sleeping"}, {"state": "Idle", "timeout_s": 0.01}, {"state": "Idle", "timeout_s": 301},
                    {}, {"pattern": "("}):
            message = await call_error(session, "wait_for", pane_id=pane_id, **bad)
            assert "bad_request" in message, bad
        assert "not_found" in await call_error(session, "wait_for", pane_id="%999", state="Idle")

        await call_ok(session, "send_input", pane_id=pane_id, text="exit 3", submit=True)
        gone = await call_ok(session, "wait_for", pane_id=pane_id, exited=True, timeout_s=10)
        assert gone["matched"] and gone["reason"] == "exited" and gone["state"] == "Exited"
        assert gone["exit_code"] == 3


def test_wait_for_through_stdio(muxd_server: MuxdTestServer) -> None:
    asyncio.run(asyncio.wait_for(_drive(muxd_server), timeout=25))
