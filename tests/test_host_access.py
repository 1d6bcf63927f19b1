"""Access across hosts (issue 30), by the same rules as on one host: two real daemons, alpha and
beta, on one real PostgreSQL database. A pane-scoped principal of alpha (a pane's own agent token,
a user token bound to alpha's pane) granted beta's pane `%N@beta` sends to it and cancels what it
sent, and is refused beta's other pane; the sends are recorded as the caller and host that sent
them (`agent:%0@alpha`, `token:orch@alpha`, `system@alpha`), in the history and in beta's audit
rows of the actions it applied. A grant holds for the run of beta's daemon it was made in (pane
ids start again with each); and alpha lists them among its active executions while they run,
marked with their host."""

from __future__ import annotations

import asyncio
import json

import pytest

from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.pane_tokens import pane_token
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
from muxd.store.pg_connection import connect as pg_connect  # noqa: E402

TURN_TIMEOUT_S = 30.0


def host_audit(url: str) -> list[tuple[str, str, str, str]]:
    """(principal, tool, status, host) of the audit rows of other hosts' actions, oldest first."""
    db = pg_connect(url)
    try:
        return db.execute("SELECT principal, tool, status, host FROM audit WHERE kind = 'host' ORDER BY id").fetchall()
    finally:
        db.close()


async def _granted_only(alpha: MuxdTestServer, secret: str, worker: str, other: str, principal: str) -> None:
    async with mcp_session(alpha, MUXD_TOKEN=secret) as session:
        # A prompt that waits for approval keeps beta's turn running until something stops it.
        held = await call_ok(session, "send_task", pane_id=f"{worker}@beta", message="tool")
        refused = await call_error(session, "send_task", pane_id=f"{other}@beta", message="not granted")
        assert "forbidden" in refused and f"{other}@beta" in refused, refused

        async def running() -> bool:
            found = await call_ok(session, "list_recent_executions", host="beta")
            return [(e["id"], e["status"]) for e in found["executions"]] == [(held["execution_id"], "running")]

        await async_wait_until(running, timeout=TURN_TIMEOUT_S, message="beta's turn running, seen by the sender")
        recent = await call_ok(session, "list_recent_executions", host="beta")
        assert recent["executions"][0]["principal"] == principal
        # Running on beta, listed among what runs here, marked with its host.
        active = (await call_ok(session, "list_active_executions"))["executions"]
        assert [(e["id"], e["host"], e["pane_id"], e["status"]) for e in active] == [
            (held["execution_id"], "beta", f"{worker}@beta", "running")], active
        # What it sent is its own to cancel, recorded on beta under its name qualified with alpha.
        cancelled = await call_ok(session, "cancel_execution", execution_id=held["execution_id"])
        assert cancelled["status"] == "cancelled", cancelled
        ended = await call_ok(session, "wait_for", execution_id=held["execution_id"], timeout_s=TURN_TIMEOUT_S)
        assert ended["executions"][0]["status"] == "cancelled"
        assert (await call_ok(session, "list_active_executions"))["executions"] == []


def test_a_pane_agent_granted_another_hosts_pane_sends_and_cancels_there_and_no_further(
        alpha: MuxdTestServer, beta: MuxdTestServer, postgres_url: str) -> None:
    worker, other = start_fake_agent(beta, "worker"), start_fake_agent(beta, "other")
    own = alpha.cli("new-session", "-d", "-P", "-s", "orchestrator", check=True).stdout.strip()
    secret = pane_token(alpha, own)
    # Not granted yet: refused on alpha as a local pane out of its scope is.
    assert "forbidden" in asyncio.run(_refused(alpha, secret, f"{worker}@beta"))
    alpha.cli("grant", "-t", f"{worker}@beta", "--to", own, check=True)
    nowhere = alpha.cli("grant", "-t", "%0@gamma", "--to", own)  # no daemon of gamma: no run to bind it to
    assert nowhere.returncode != 0 and "host gamma has no daemon in the fleet now" in nowhere.stderr, nowhere.stderr
    asyncio.run(_granted_only(alpha, secret, worker, other, f"agent:{own}@alpha"))
    wait_until(lambda: host_audit(postgres_url) == [
        (f"agent:{own}@alpha", "send_task", "ok", "beta"), (f"agent:{own}@alpha", "cancel_execution", "ok", "beta")],
        timeout=10, message="beta's audit of the actions it applied")
    # Taken back: refused again.
    alpha.cli("grant", "--revoke", "-t", f"{worker}@beta", "--to", own, check=True)
    assert "forbidden" in asyncio.run(_refused(alpha, secret, f"{worker}@beta"))


async def _refused(alpha: MuxdTestServer, secret: str, target: str) -> str:
    async with mcp_session(alpha, MUXD_TOKEN=secret) as session:
        return await call_error(session, "send_task", pane_id=target, message="not granted")


def test_a_token_bound_to_another_hosts_pane_acts_there_recorded_as_sent_from_its_host(
        alpha: MuxdTestServer, beta: MuxdTestServer, postgres_url: str) -> None:
    worker, other = start_fake_agent(beta, "worker"), start_fake_agent(beta, "other")
    # A token bound to beta's pane only: alpha has no pane of it, and it is not revoked for that.
    secret = alpha.cli("token", "create", "--tier", "execute_advanced", "--name", "orch", "--pane", f"{worker}@beta",
                       check=True).stdout.strip()
    # `token:ci@alpha` is what beta records of token ci's sends from alpha: no token may be named so.
    named = alpha.cli("token", "create", "--tier", "view_only", "--name", "ci@alpha")
    assert named.returncode != 0 and "'@' names the host a principal sent from" in named.stderr, named.stderr
    listed = alpha.cli("token", "list", check=True).stdout
    assert f"{worker}@beta" in listed and "orch" in listed
    asyncio.run(_granted_only(alpha, secret, worker, other, "token:orch@alpha"))
    assert _fleet_targets(alpha, secret) == [f"{worker}@beta"]  # of beta's two panes, the one granted
    wait_until(lambda: [row[:2] for row in host_audit(postgres_url)] == [
        ("token:orch@alpha", "send_task"), ("token:orch@alpha", "cancel_execution")],
        timeout=10, message="beta's audit of the actions it applied")
    # beta's daemon runs anew: its pane ids start again, and the pane bound is not the one of that id now.
    beta.stop()
    beta.start()
    assert start_fake_agent(beta, "worker") == worker
    wait_until(lambda: f"{worker}@beta" in _fleet_targets(alpha, None), timeout=10, message="beta's new run listed")
    assert _fleet_targets(alpha, secret) == []  # the pane of that id now is another run's
    refused = asyncio.run(_refused(alpha, secret, f"{worker}@beta"))
    assert "forbidden" in refused and "earlier run" in refused and "host beta" in refused, refused


def _fleet_targets(alpha: MuxdTestServer, secret: str | None) -> list[str]:
    """The other hosts' panes `muxd ls --all-hosts` lists to `secret`'s holder (None: the socket's owner)."""
    listed = alpha.cli("ls", "--all-hosts", "--json", env={"MUXD_CLI_TOKEN": secret} if secret else None, check=True)
    return [p["target"] for p in json.loads(listed.stdout)["panes"] if "@" in p["target"]]


def test_a_grant_of_another_hosts_pane_needs_a_shared_store(muxd_server: MuxdTestServer) -> None:
    own = muxd_server.cli("new-session", "-d", "-P", "-s", "home", check=True).stdout.strip()
    ran = muxd_server.cli("grant", "-t", "%1@beta", "--to", own)
    assert ran.returncode != 0 and "host beta is not reachable" in ran.stderr, ran.stderr
