"""wait_for through the real stdio client: a shell pane's states, a regex, a timeout, an exit."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session, result_text
from muxd.testing.patience import patient_wait_for, stretched
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
    asyncio.run(patient_wait_for(_drive(muxd_server), timeout=25))


# ------------------------------------------------------------------ a catastrophic pattern

REDOS_PATTERN = r"^(a|aa)+$x"  # backtracks 2^n ways on a line of n `a` before failing at `x`
REDOS_LINE = "a" * 60
REDOS_TIMEOUT_S = 1.0
# The wait answers within its timeout plus a screen check; a frozen server never does. Past
# this the server is killed, so a broken build fails here instead of hanging the suite.
REDOS_BOUND_S = 8.0


async def _redos_scenario(mcp: HttpMcp, waiter_token: str, other_token: str) -> None:
    async with mcp.session(waiter_token) as waiter, mcp.session(other_token) as other:
        started = time.monotonic()
        wait = asyncio.create_task(waiter.call_tool("wait_for", {
            "pane_id": "aaa", "pattern": REDOS_PATTERN, "timeout_s": REDOS_TIMEOUT_S}))
        served, listed = 0, []
        while not wait.done():  # another client is answered while the wait runs (or told to slow down)
            result = await other.call_tool("list_panes", {})
            assert not result.is_error or "rate_limited" in result_text(result), result_text(result)
            if not result.is_error:
                listed = [p["name"] for p in result.structured_content["panes"]]
            served += 1
        answer = (await wait).structured_content
        elapsed_s = time.monotonic() - started
        assert answer is not None and answer["matched"] is False and answer["reason"] == "timed_out", answer
        assert elapsed_s < REDOS_TIMEOUT_S + stretched(3.0), elapsed_s
        assert served >= 2 and listed == ["aaa"], (served, listed)


def test_a_catastrophic_pattern_cannot_freeze_the_server(muxd_server: MuxdTestServer) -> None:
    muxd_server.cli("new-session", "-d", "--name", "aaa", "--", sys.executable, "-c",
                    f"print({REDOS_LINE!r}); import time; time.sleep(600)", check=True)
    muxd_server.wait_for_text("aaa", REDOS_LINE)
    mcp = HttpMcp(muxd_server)
    watchdog = threading.Timer(stretched(REDOS_BOUND_S), mcp.process.kill)
    watchdog.start()
    tokens = create_token(muxd_server, "view_only"), create_token(muxd_server, "view_only")
    try:
        try:
            asyncio.run(patient_wait_for(_redos_scenario(mcp, *tokens), timeout=stretched(REDOS_BOUND_S) + 5))
        except Exception as exc:
            if mcp.process.poll() is not None:  # the watchdog fired: the calls died with the server
                raise AssertionError(f"muxd mcp --http was frozen by {REDOS_PATTERN!r}: no answers in "
                                     f"{REDOS_BOUND_S} s, killed ({exc!r})") from None
            raise
    finally:
        watchdog.cancel()
        if mcp.process.poll() is None:
            assert mcp.stop() == 0
