"""Acting across hosts (issue 30): two real daemons, alpha and beta (their own MUXD_HOST and socket
directories), on one real PostgreSQL database. An MCP client of alpha (the real SDK client over
`muxd mcp`) sends a task to a fake agent in beta's pane as `%N@beta`, gets its execution id at
once and waits for its result as for a local one; cancels beta's running execution; sends while
beta's daemon is down and the prompt is delivered when it starts (one cancelled meanwhile never
is); is refused on alpha, with no action written, where the caller may not use the pane; hears
beta's typed refusal of an unknown pane; dispatches alpha's tasks to beta's agent. An action whose
word to beta was lost is claimed when beta listens again. A SQLite daemon names another host's
pane as unreachable."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from muxd.testing.fake_agent_panes import FAKE_AGENT, start_fake_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer, host_server
from muxd.testing.wait import async_wait_until, wait_until

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
from muxd.executions.record import new_execution_id  # noqa: E402
from muxd.store import host_actions  # noqa: E402
from muxd.store.host_actions import channel_of  # noqa: E402
from muxd.store.hosts import use_host  # noqa: E402
from muxd.store.pg_connection import connect as pg_connect  # noqa: E402

TURN_TIMEOUT_S = 30.0


def actions(url: str) -> list[tuple[str, str, str, str | None]]:
    """(kind, host, state, error_code) of every action written, oldest first."""
    db = pg_connect(url)
    try:
        return db.execute("SELECT kind, host, state, error_code FROM host_actions ORDER BY seq").fetchall()
    finally:
        db.close()


async def _send_wait_and_read(alpha: MuxdTestServer, pane: str, url: str) -> None:
    async with mcp_session(alpha) as session:
        started = time.monotonic()
        sent = await call_ok(session, "send_task", pane_id=f"{pane}@beta", message="summarise the repo",
                             task_id="t-remote")
        assert time.monotonic() - started < stretched(3.0)  # beta answered: no wait for its daemon
        assert sent["execution_id"].startswith("exec_") and sent["created"]
        assert sent["status"] in ("running", "pending") and sent["pane_id"] == pane
        waited = await call_ok(session, "wait_for", execution_id=sent["execution_id"], timeout_s=TURN_TIMEOUT_S)
        assert waited["matched"] and waited["executions"][0]["status"] == "success", waited
        done = (await call_ok(session, "get_execution_result", agent_name="worker",
                              execution_id=sent["execution_id"]))["execution"]
        assert done["message"] == "summarise the repo" and done["task_id"] == "t-remote"
        assert done["principal"] == "system@alpha" and done["triggered_by"] == "mcp"
        assert done["response"] and "Here is my answer" in done["response"]
        recent = await call_ok(session, "list_recent_executions", host="beta")
        assert [e["id"] for e in recent["executions"]] == [sent["execution_id"]]
        # An unknown pane of beta: beta's own typed refusal, within the bounded wait.
        refused = await call_error(session, "send_task", pane_id="%99@beta", message="hello")
        assert "not_found" in refused and "host beta" in refused and "%99" in refused
        # alpha's own pane named with alpha's host is alpha's, as `%N` is.
        assert "not_found" in await call_error(session, "send_task", pane_id="%99@alpha", message="hello")
    assert actions(url) == [("send", "beta", "done", None), ("send", "beta", "refused", "not_found")]


def test_a_task_sent_to_another_hosts_pane_runs_there_and_is_waited_for_here(
        alpha: MuxdTestServer, beta: MuxdTestServer, postgres_url: str) -> None:
    pane = start_fake_agent(beta, "worker")
    asyncio.run(_send_wait_and_read(alpha, pane, postgres_url))
    # beta's audit says who asked each action it applied (alpha's socket owner) and how it ended.
    db = pg_connect(postgres_url)
    try:
        wait_until(lambda: db.execute("SELECT principal, tool, error_code, host FROM audit WHERE kind = 'host' "
                                      "ORDER BY id").fetchall() == [("system@alpha", "send_task", None, "beta"),
                                                                    ("system@alpha", "send_task", "not_found", "beta")],
                   timeout=10, message="beta's audit rows of alpha's sends")
    finally:
        db.close()


async def _cancel_across(alpha: MuxdTestServer, beta: MuxdTestServer, pane: str) -> None:
    async with mcp_session(alpha) as session:
        # A prompt that waits for approval keeps beta's turn running until something stops it.
        held = await call_ok(session, "send_task", pane_id=f"{pane}@beta", message="tool")
        execution_id = held["execution_id"]

        async def waiting_for_approval() -> bool:
            found = await call_ok(session, "list_recent_executions", host="beta")
            return bool(found["executions"]) and found["executions"][0]["status"] == "running" and \
                "proceed?" in beta.capture(pane)

        await async_wait_until(waiting_for_approval, timeout=TURN_TIMEOUT_S, message="beta's turn running")
        cancelled = await call_ok(session, "cancel_execution", execution_id=execution_id)
        assert cancelled["status"] == "cancelled" and cancelled["cancelled"]
        waited = await call_ok(session, "wait_for", execution_id=execution_id, timeout_s=TURN_TIMEOUT_S)
        assert waited["executions"][0]["status"] == "cancelled"
        assert "conflict" in await call_error(session, "cancel_execution", execution_id=execution_id)


def test_a_cancel_from_another_host_stops_the_running_execution(alpha: MuxdTestServer,
                                                                beta: MuxdTestServer) -> None:
    pane = start_fake_agent(beta, "worker")
    asyncio.run(_cancel_across(alpha, beta, pane))
    screen = beta.capture(pane)
    assert "Interrupted" in screen  # beta's agent got its interrupt key


async def _send_while_down(alpha: MuxdTestServer, url: str, config: Path) -> None:
    async with mcp_session(alpha) as session:
        sent = await call_ok(session, "send_task", pane_id="%0@beta", message="write the notes")
        assert sent["status"] == "pending" and sent["created"]
        listed = await call_ok(session, "wait_for", execution_id=sent["execution_id"], timeout_s=1)
        assert not listed["matched"] and listed["executions"][0]["status"] == "pending"
        # Cancelled before beta took it: taken back, never delivered.
        dropped = await call_ok(session, "send_task", pane_id="%0@beta", message="never delivered")
        cancelled = await call_ok(session, "cancel_execution", execution_id=dropped["execution_id"])
        assert cancelled["status"] == "cancelled"
        beta = host_server(url, "beta", MUXD_CONFIG=str(config)).start()
        try:
            waited = await call_ok(session, "wait_for", execution_id=sent["execution_id"],
                                   timeout_s=TURN_TIMEOUT_S)
            assert waited["matched"] and waited["executions"][0]["status"] == "success", (
                waited, actions(url), beta.log_path.read_text()[-3000:])
            assert "write the notes" in beta.capture("%0") and "never delivered" not in beta.capture("%0")
            gone = await call_ok(session, "wait_for", execution_id=dropped["execution_id"], timeout_s=1)
            assert gone["executions"][0]["status"] == "cancelled"
        finally:
            beta.stop()


def test_a_task_sent_while_the_owner_is_down_is_delivered_when_it_starts(
        alpha: MuxdTestServer, postgres_url: str, tmp_path: Path) -> None:
    config = tmp_path / "beta.conf"
    config.write_text("new-session -d -s worker --name worker -- " + " ".join(FAKE_AGENT) + " claude\n")
    asyncio.run(_send_while_down(alpha, postgres_url, config))
    assert actions(postgres_url) == [("send", "beta", "done", None), ("send", "beta", "withdrawn", None)]


async def _refused_here(alpha: MuxdTestServer, secret: str, pane: str) -> None:
    async with mcp_session(alpha, MUXD_TOKEN=secret) as session:
        refused = await call_error(session, "send_task", pane_id=f"{pane}@beta", message="not yours")
        assert "forbidden" in refused and f"{pane}@beta" in refused
        refused = await call_error(session, "dispatch_tasks", pane_id=f"{pane}@beta")
        assert "forbidden" in refused


def test_a_caller_not_allowed_the_pane_is_refused_on_its_own_host_with_nothing_written(
        alpha: MuxdTestServer, beta: MuxdTestServer, postgres_url: str) -> None:
    pane = start_fake_agent(beta, "worker")
    own = alpha.cli("new-session", "-d", "-P", "-s", "home", check=True).stdout.strip()
    secret = alpha.cli("token", "create", "--tier", "execute_advanced", "--pane", own, check=True).stdout.strip()
    asyncio.run(_refused_here(alpha, secret, pane))
    assert actions(postgres_url) == []


def test_another_hosts_pane_is_unreachable_from_a_sqlite_daemon(muxd_server: MuxdTestServer) -> None:
    ran = muxd_server.cli("submit", "-t", "%1@beta", "hello")
    assert ran.returncode != 0
    assert ran.stderr.strip().splitlines()[-1] == (
        "muxd: host beta is not reachable: this daemon's store is not shared "
        "(MUXD_DB=postgresql://… shares one between hosts)")


async def _dispatch_across(alpha: MuxdTestServer, pane: str) -> None:
    async with mcp_session(alpha) as session:
        started = await call_ok(session, "dispatch_tasks", pane_id=f"{pane}@beta", plan="fleet")
        [dispatcher] = started["dispatchers"]  # beta's own, as beta answered
        assert dispatcher["paneId"] == pane and dispatcher["principal"] == f"agent:{pane}@beta"
        assert dispatcher["plan"] == "fleet" and not dispatcher["stopping"]


def test_tasks_are_dispatched_to_another_hosts_pane(alpha: MuxdTestServer, beta: MuxdTestServer) -> None:
    pane = start_fake_agent(beta, "worker")
    alpha.cli("task", "add", "write the docs", "--plan", "fleet", check=True)
    asyncio.run(_dispatch_across(alpha, pane))

    def done() -> dict | None:
        listed = json.loads(alpha.run_here("task", "ls", "--json", check=True).stdout)["tasks"]
        return listed[0] if listed[0]["state"] == "done" else None

    task = wait_until(done, timeout=TURN_TIMEOUT_S, message="alpha's task done by beta's agent")
    assert task["claimed_by"] == f"agent:{pane}@beta"


async def _wait_across_a_gap(alpha: MuxdTestServer, execution_id: str, url: str) -> None:
    async with mcp_session(alpha) as session:
        waited = await call_ok(session, "wait_for", execution_id=execution_id, timeout_s=TURN_TIMEOUT_S)
        assert waited["matched"] and waited["executions"][0]["status"] == "success", waited
    assert actions(url) == [("send", "beta", "done", None)]


def test_an_action_whose_word_was_lost_is_claimed_when_the_owner_listens_again(
        alpha: MuxdTestServer, beta: MuxdTestServer, postgres_url: str) -> None:
    pane = start_fake_agent(beta, "worker")
    listening = f"SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN {channel_of('beta')}'"
    db = pg_connect(postgres_url)
    try:
        use_host(db, "alpha")
        # Written as alpha writes a send, its word to beta lost (no NOTIFY: as if beta did not listen).
        execution_id = new_execution_id()
        host_actions.insert_action(db, "send", "beta", "system", {"message": "after the gap", "triggered_by": "mcp"},
                                   pane_id=pane, execution_id=execution_id)
        # beta's listening connection drops; listening again, beta reads what it may have missed.
        assert db.execute(f"SELECT pg_terminate_backend(pid) FROM ({listening}) AS l").fetchall() == [(True,)]
    finally:
        db.close()
    asyncio.run(_wait_across_a_gap(alpha, execution_id, postgres_url))
