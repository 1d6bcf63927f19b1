"""Live state across hosts (issue 30): two real daemons (hosts alpha and beta, each its own socket
directory) on one PostgreSQL database. Alpha's MCP list_agents and agent_summary and its `muxd ls
--all-hosts` show beta's fake agent as beta's (`%N@beta`), beta's state changes reach alpha within
a bounded wait, and beta killed with SIGKILL is shown stale (its agent's state Unknown, the last
one kept apart) while its running execution is interrupted, once; beta started again takes its
host back and publishes again. A host that never comes back is forgotten, its history kept. A lone daemon on SQLite answers as before."""

from __future__ import annotations

import asyncio
import json
import os
import signal

from muxd.config import ENV_FLEET_FORGET, ENV_FLEET_STALE
from muxd.executions.record import Execution
from muxd.store import fleet
from muxd.store.execution_rows import UPSERT, to_row
from muxd.store.hosts import use_host
from muxd.store.pg_connection import connect as pg_connect
from muxd.testing.fake_agent_panes import agent_state, ask, start_fake_agent
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

STALE_S = 5.0  # $MUXD_FLEET_STALE_S for both daemons: a beat every ~1.7 s, beta's death shown in seconds
SEEN_TIMEOUT_S = 20.0
FORGET_S = 1.0  # $MUXD_FLEET_FORGET_S: below the stale bound, so forgotten once STALE_S have passed


def _daemon(url: str, host: str) -> MuxdTestServer:
    return MuxdTestServer(env={"MUXD_DB": url, "MUXD_HOST": host, ENV_FLEET_STALE: str(STALE_S)}).start()


def _fleet(server: MuxdTestServer) -> dict:
    return json.loads(server.run_here("ls", "--all-hosts", "--json", check=True).stdout)


def _entry(server: MuxdTestServer, target: str) -> dict | None:
    return next((p for p in _fleet(server)["panes"] if p["target"] == target), None)


async def _mcp_view(server: MuxdTestServer, target: str) -> tuple[dict, dict, dict]:
    """list_agents, agent_summary of `target` and get_agent_activity_summary, over `server`'s MCP."""
    async with mcp_session(server) as session:
        return (await call_ok(session, "list_agents"), await call_ok(session, "agent_summary", pane_id=target),
                await call_ok(session, "get_agent_activity_summary"))


def test_two_daemons_see_each_others_agents_and_a_killed_one_goes_stale(postgres_url: str) -> None:
    alpha, beta = _daemon(postgres_url, "alpha"), _daemon(postgres_url, "beta")
    try:
        pane = start_fake_agent(beta, "worker")
        target = f"{pane}@beta"
        seen = wait_until(lambda: (e := _entry(alpha, target)) is not None and e["agent"]["activity"]["state"] == "Idle" and e,
                          timeout=SEEN_TIMEOUT_S, message="beta's agent on alpha, idle")
        assert seen["host"] == "beta" and not seen["stale"] and seen["agent"]["agent_type"] == "claude"
        assert seen["name"] == "worker"

        listed, summary, activity = asyncio.run(_mcp_view(alpha, target))
        worker = next(row for row in activity["by_agent"] if row["agent_name"] == "worker")
        assert (worker["host"], worker["stale"], worker["status"]) == ("beta", False, "idle")
        assert any(line.startswith(f"{target} worker claude Idle") for line in listed["agents"]), listed
        assert [h["host"] for h in listed["hosts"]] == ["beta"] and listed["hosts"][0]["stale"] is False
        assert summary["host"] == "beta" and summary["pane_id"] == target
        assert summary["activity"]["state"] == "Idle" and summary["stale"] is False
        assert summary["observed_at"] > 0 and summary["state_source"] == "screen"

        # A pane-scoped token of alpha's hears of no other host's pane.
        own = alpha.cli("new-session", "-d", "-P", "--", "sleep", "600", check=True).stdout.strip()
        secret = alpha.cli("token", "create", "--tier", "execute_basic", "--pane", own, check=True).stdout.strip()

        async def scoped_view() -> dict:
            async with mcp_session(alpha, MUXD_TOKEN=secret) as session:
                return await call_ok(session, "list_agents")

        scoped = asyncio.run(scoped_view())
        assert scoped["hosts"] == [] and [line.split()[0] for line in scoped["agents"]] == [own]

        # A state change on beta reaches alpha: the agent asks for a confirmation (a running turn).
        ask(beta, pane)
        wait_until(lambda: (e := _entry(alpha, target)) is not None and e["agent"]["activity"]["state"] == "AwaitingConfirmation",
                   timeout=SEEN_TIMEOUT_S, message="beta's agent awaiting confirmation, seen on alpha")
        table = alpha.run_here("ls", "--all-hosts", check=True).stdout.splitlines()
        assert table[0].split()[:2] == ["HOST", "SESSION"]
        assert any(row.split()[0] == "beta" and row.split()[3].rstrip("*") == target for row in table[1:]), table

        db = pg_connect(postgres_url)
        try:
            # The turn's row is written within HISTORY_UNTOLD_RUNNING_ROW_WITHIN_S (or with its end).
            running = wait_until(lambda: db.execute("SELECT id FROM executions WHERE host = 'beta' AND "
                                                    "status = 'running'").fetchall(),
                                 timeout=SEEN_TIMEOUT_S, message="beta's running turn recorded")
            assert len(running) == 1
            os.kill(beta.pid, signal.SIGKILL)
            stale = wait_until(lambda: (e := _entry(alpha, target)) is not None and e["stale"] and e,
                               timeout=SEEN_TIMEOUT_S, message="beta stale on alpha")
            assert stale["agent"]["activity"]["state"] == "Unknown" and stale["last_state"] == "AwaitingConfirmation"
            assert stale["last_heartbeat_at"] > 0

            def interrupted() -> list:
                return db.execute("SELECT status, error_type FROM executions WHERE id = ?", (running[0][0],)).fetchall()

            wait_until(lambda: interrupted() == [("interrupted", "interrupted")], timeout=SEEN_TIMEOUT_S,
                       message="beta's running execution interrupted by alpha")
            marks = db.execute("SELECT stale_since IS NOT NULL FROM fleet_hosts WHERE host = 'beta'").fetchall()
            assert marks == [(True,)]

            listed, summary, activity = asyncio.run(_mcp_view(alpha, target))
            worker = next(row for row in activity["by_agent"] if row["agent_name"] == "worker")
            assert (worker["host"], worker["stale"], worker["status"]) == ("beta", True, "unknown")
            assert worker["last_execution_status"] == "interrupted"
            assert listed["hosts"][0]["stale"] is True
            line = next(line for line in listed["agents"] if line.startswith(target))
            assert " Unknown " in f"{line} " and "AwaitingConfirmation" not in line.split("last")[0]
            assert summary["activity"]["state"] == "Unknown" and summary["stale"] is True
            assert summary["last_state"] == "AwaitingConfirmation"
        finally:
            db.close()

        # Beta again: its host taken back, nothing of the last run's panes left.
        beta.start()
        wait_until(lambda: _entry(alpha, target) is None, timeout=SEEN_TIMEOUT_S, message="beta's old panes gone")
        hosts = _fleet(alpha)["hosts"]
        assert [(h["host"], h["stale"], h["stale_since"]) for h in hosts] == [("beta", False, None)]
        fresh = f"{start_fake_agent(beta, 'again')}@beta"  # and what it runs now is published, live
        wait_until(lambda: (e := _entry(alpha, fresh)) is not None and not e["stale"] and e["name"] == "again",
                   timeout=SEEN_TIMEOUT_S, message="beta's new agent on alpha")
    finally:
        beta.stop()
        alpha.stop()


def test_a_host_stale_for_long_is_forgotten_by_a_daemons_heartbeat_its_history_kept(postgres_url: str) -> None:
    """A host that never comes back (gamma, its rows written as its daemon writes them, its beat made
    old) is taken over, then forgotten by alpha's heartbeat after MUXD_FLEET_FORGET_S: listed no
    more, its panes with it, its executions kept; alpha logs it once."""
    alpha = MuxdTestServer(env={"MUXD_DB": postgres_url, "MUXD_HOST": "alpha", ENV_FLEET_STALE: str(STALE_S),
                                ENV_FLEET_FORGET: str(FORGET_S)}).start()  # its start migrates the database
    db = pg_connect(postgres_url)
    try:
        use_host(db, "gamma")
        fleet.begin(db, 1, 0.0)
        fleet.publish(db, [("%1", "Idle", "claude", "{}", "{}", 0.0)], [])
        db.execute(UPSERT, to_row(Execution(id="exec_gamma_00000001", pane_id="%1", pane_key="run/%1", agent_name="a",
                                            kind="prompt", status="success", started_at=1.0)))
        db.execute("UPDATE fleet_hosts SET beat_at = now() - make_interval(secs => 3600) WHERE host = 'gamma'")
        try:
            wait_until(lambda: db.execute("SELECT host FROM fleet_hosts WHERE host = 'gamma'").fetchall() == [],
                       timeout=SEEN_TIMEOUT_S, message="gamma forgotten")
            listed = _fleet(alpha)
            assert listed["hosts"] == [] and all(p["host"] == "alpha" for p in listed["panes"])
            assert db.execute("SELECT count(*) FROM fleet_panes WHERE host = 'gamma'").fetchone() == (0,)
            assert db.execute("SELECT status FROM executions WHERE host = 'gamma'").fetchall() == [("success",)]
            assert alpha.log_path.read_text().count("host gamma sent no heartbeat for 5 s: forgotten") == 1
        finally:
            alpha.stop()
    finally:
        db.close()


def test_a_lone_daemon_on_sqlite_answers_for_its_own_panes_as_ever(muxd_server: MuxdTestServer) -> None:
    """No fleet tables, no heartbeat: --all-hosts lists this host's panes, list_agents has no hosts."""
    pane = start_fake_agent(muxd_server, "solo")
    listed = _fleet(muxd_server)
    assert (listed["shared"], listed["hosts"]) == (False, [])
    assert [(p["host"], p["target"], p["stale"]) for p in listed["panes"]] == [(listed["host"], pane, False)]

    async def agents() -> dict:
        async with mcp_session(muxd_server) as session:
            return await call_ok(session, "list_agents")

    result = asyncio.run(agents())
    assert list(result) == ["agents"] and [line.split()[:4] for line in result["agents"]] == [
        [pane, "solo", "claude", "Idle"]]
