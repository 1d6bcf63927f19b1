"""The shared PostgreSQL database going away and coming back under live daemons (issue 30): its
server stopped (pg_ctl stop -m fast) and started again on a private cluster of this module's.

One daemon: its panes keep running and answering (send-keys, capture-pane); the calls that need
the database fail at once with one `unreachable` line (the CLI's, MCP's store_unavailable), and
the fleet's views (list_agents, `ls --all-hosts`) show this host's panes and say why no others; a
command and a turn run and ended during the outage are answered from memory (`muxd run --wait`,
`submit --wait`) and written once the server is back, with the background writes (the run's
pane token, made and revoked; the refused MCP call's audit row); the queue and tokens work again
without a restart; the log holds no traceback and a few lines.

Two daemons: an outage longer than the staleness bound takes neither host over (each had no way
to beat), their running executions stay running; a prompt for beta's agent sent through alpha
during the outage is refused at once (never delivered later); after the restart a token made
through alpha opens beta, and a prompt sent from alpha to beta's agent is delivered (both listened
again). A live host found taken over (its own connection was out) writes what it runs back as
running.

The writer itself: background writes made while the server is down are written, in their order,
before the first job after its return; those it never takes are named as lost at close."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator

import pytest

from muxd.config import ENV_FLEET_STALE
from muxd.errors import StoreUnavailable
from muxd.store.database import ENV_BUSY_TIMEOUT
from muxd.store.opening import open_database
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.patience import stretched
from muxd.testing.postgres import PostgresCluster
from muxd.testing.pytest_plugin import fresh_database, running_cluster
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
from muxd.store.pg_connection import connect as pg_connect  # noqa: E402

BUSY_TIMEOUT_S = 1.0      # each daemon's connect and lock timeout: a refused call is this quick
REFUSED_WITHIN_S = 5.0    # machine time a call that needs the database may take to fail
BACK_TIMEOUT_S = 30.0     # machine time for the daemons to use the database again after its start
STALE_S = 3.0             # $MUXD_FLEET_STALE_S of the two daemons: a beat every second
TURN_TIMEOUT_S = 30.0
UNREACHABLE = "muxd: the database cannot be reached"


@pytest.fixture(scope="module")
def stoppable_cluster() -> Iterator[PostgresCluster]:
    """A cluster of this module's own: stopping it leaves the session's to the other tests."""
    yield from running_cluster()


@pytest.fixture
def outage_url(stoppable_cluster: PostgresCluster) -> Iterator[str]:
    """A new database of the stoppable cluster (its server running again after the test)."""
    yield from fresh_database(stoppable_cluster)


def _daemon(url: str, host: str, **env: str) -> MuxdTestServer:
    return MuxdTestServer(env={"MUXD_DB": url, "MUXD_HOST": host, ENV_BUSY_TIMEOUT: str(BUSY_TIMEOUT_S), **env}).start()


def _refused(server: MuxdTestServer, *args: str) -> str:
    """The one error line of a call that needs the database, which must fail within REFUSED_WITHIN_S."""
    began = time.monotonic()
    ran = server.cli(*args)
    assert time.monotonic() - began < stretched(REFUSED_WITHIN_S), f"muxd {' '.join(args)} took too long"
    assert ran.returncode != 0 and ran.stdout == "", (args, ran)
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(UNREACHABLE), (args, ran.stderr)
    return lines[0]


async def _mcp_during_outage(server: MuxdTestServer) -> tuple[str, dict]:
    """list_recent_executions' error and list_agents' answer, over `server`'s MCP."""
    async with mcp_session(server) as session:
        return await call_error(session, "list_recent_executions"), await call_ok(session, "list_agents")


def _rows(url: str, sql: str) -> list[tuple]:
    db = pg_connect(url)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_a_daemon_keeps_its_panes_and_executions_through_an_outage(stoppable_cluster: PostgresCluster,
                                                                  outage_url: str) -> None:
    server = _daemon(outage_url, "alpha")
    try:
        shell = server.cli("new-session", "-d", "-P", "--", "sh", check=True).stdout.strip()
        agent = start_fake_agent(server, "worker")
        assert server.cli("run", "--wait", "--", "sh", "-c", "echo before").returncode == 0

        stoppable_cluster.stop_server("fast")
        # The panes answer: nothing of them needs the database.
        server.cli("send-keys", "-t", shell, "echo still-$((40 + 2))", "Enter", check=True)
        server.wait_for_text(shell, "still-42")
        # What needs it fails at once, one line each.
        for args in (("history", "--json"), ("task", "add", "write the docs"), ("task", "ls"),
                     ("token", "create", "--tier", "execute_basic")):
            _refused(server, *args)
        refused, listed = asyncio.run(_mcp_during_outage(server))
        assert "store_unavailable" in refused and "cannot be reached" in refused, refused
        # The fleet's views show this host's own agents, and say why no others.
        assert [line.split()[0] for line in listed["agents"]] == [shell, agent] and listed["hosts"] == []
        assert listed["hosts_unreadable"].startswith("store_unavailable: the database cannot be reached")
        fleet = server.cli("ls", "--all-hosts", "--json")
        assert fleet.returncode == 1 and [p["target"] for p in json.loads(fleet.stdout)["panes"]] == [shell, agent]
        assert json.loads(fleet.stdout)["unreadable"].startswith("the database cannot be reached")
        # Commands and a turn that start and end now are answered from memory ...
        during = server.cli("run", "--wait", "--", "sh", "-c", "echo during; exit 3")
        assert during.returncode == 3 and during.stdout == "during\n", during
        command_id = during.stderr.split()[0]
        turn = server.cli("submit", "-t", agent, "hello", "--wait", "--json", timeout=TURN_TIMEOUT_S)
        assert turn.returncode == 0, turn.stderr
        turn_id = json.loads(turn.stdout)["id"]
        shown = json.loads(server.cli("show", command_id, "--transcript", "--json", check=True).stdout)
        assert shown["execution"]["exit_code"] == 3 and "during" in shown["transcript"]
        token_of_run = f"agent:{shown['execution']['pane_id']}@alpha"  # made and revoked during the outage

        stoppable_cluster.start_server()
        # ... and written once the server is back, by the backlog's retries: nothing is lost.
        wait_until(lambda: len(_rows(outage_url, "SELECT id FROM executions")) == 3, timeout=BACK_TIMEOUT_S,
                   message="the executions of the outage written")
        rows = dict((r[0], r[1:]) for r in _rows(outage_url, "SELECT id, kind, status, exit_code FROM executions"))
        assert rows[command_id] == ("command", "failed", 3) and rows[turn_id] == ("prompt", "success", None)
        listed = json.loads(server.cli("history", "--json", check=True).stdout)
        assert listed["total"] == 3
        # The background writes of the outage are written too: the run's pane token, made and revoked
        # (other daemons read it), and the audit row of the refused MCP call.
        assert _rows(outage_url, f"SELECT revoked_at IS NOT NULL FROM tokens WHERE name = '{token_of_run}'") == [(True,)]
        assert ("list_recent_executions", "error") in _rows(outage_url, "SELECT tool, status FROM audit")
        # The queue and the tokens work again, on the same daemon.
        server.cli("task", "add", "write the docs", check=True)
        assert len(json.loads(server.cli("task", "ls", "--json", check=True).stdout)["tasks"]) == 1
        server.cli("token", "create", "--tier", "execute_basic", check=True)
        log = server.log_path.read_text()
        assert "Traceback" not in log and "connected to the database again" in log
        assert len(log.splitlines()) < 40, log
    finally:
        server.stop()


def test_two_daemons_take_neither_over_after_a_shared_outage(stoppable_cluster: PostgresCluster,
                                                            outage_url: str) -> None:
    alpha = _daemon(outage_url, "alpha", **{ENV_FLEET_STALE: str(STALE_S)})
    beta = _daemon(outage_url, "beta", **{ENV_FLEET_STALE: str(STALE_S)})
    try:
        agent = start_fake_agent(beta, "worker")
        running = [server.cli("run", "--", "sleep", "600", check=True).stdout.split()[0] for server in (alpha, beta)]
        wait_until(lambda: len(_rows(outage_url, "SELECT host FROM fleet_hosts")) == 2, timeout=BACK_TIMEOUT_S,
                   message="both hosts beating")

        stoppable_cluster.stop_server("fast")
        # The outage itself is what is tested: longer than the staleness bound, no host can beat.
        outage_ends = time.monotonic() + STALE_S * 2
        # A prompt for another host's pane cannot be written: refused at once, never delivered later.
        _refused(alpha, "submit", "-t", f"{agent}@beta", "never sent")
        time.sleep(max(0.0, outage_ends - time.monotonic()))
        stoppable_cluster.start_server()

        def beaten_again() -> bool:
            fresh = _rows(outage_url, f"SELECT host FROM fleet_hosts WHERE beat_at > now() - interval '{STALE_S / 2} s'")
            return len(fresh) == 2
        wait_until(beaten_again, timeout=BACK_TIMEOUT_S, message="both hosts beating again")
        # Each had a whole bound of its own beats after the restart to judge the other by.
        time.sleep(STALE_S * 1.5)
        assert _rows(outage_url, "SELECT host, stale_since FROM fleet_hosts ORDER BY host") == [
            ("alpha", None), ("beta", None)]
        statuses = dict(_rows(outage_url, "SELECT id, status FROM executions"))
        assert [statuses.get(e) for e in running] == ["running", "running"]
        for server in (alpha, beta):
            assert "sent no heartbeat" not in server.log_path.read_text()

        # Both listen again: a token made through alpha opens beta, alpha's prompt reaches beta's agent.
        secret = alpha.cli("token", "create", "--tier", "execute_advanced", check=True).stdout.strip()
        assert beta.cli("ls", env={"MUXD_CLI_TOKEN": secret + "x"}).returncode != 0  # an unknown one is refused
        wait_until(lambda: beta.run_here("--token", secret, "ls").returncode == 0, timeout=BACK_TIMEOUT_S,
                   message="alpha's new token honoured by beta")
        sent = alpha.cli("submit", "-t", f"{agent}@beta", "hello", "--wait", "--json", timeout=TURN_TIMEOUT_S)
        assert sent.returncode == 0 and json.loads(sent.stdout)["status"] == "success", sent.stderr
        assert _rows(outage_url, "SELECT count(*) FROM host_actions WHERE kind = 'send'") == [(1,)]

        # Beta taken over while alive (as when its own connection was out longer than the bound):
        # its next beat finds the mark and writes what it runs back as running.
        db = pg_connect(outage_url)
        try:
            # One transaction, as a taking-over daemon writes it: a beat of beta's between the two
            # would take the mark back before its executions were marked, and never see them.
            with db.raw.transaction():
                db.execute("UPDATE fleet_hosts SET stale_since = now() WHERE host = 'beta'")
                db.execute("UPDATE executions SET status = 'interrupted' WHERE host = 'beta' AND status = 'running'")
        finally:
            db.close()
        wait_until(lambda: _rows(outage_url, f"SELECT status FROM executions WHERE id = '{running[1]}'") == [("running",)],
                   timeout=BACK_TIMEOUT_S, message="beta's running execution written back as running")
        assert _rows(outage_url, "SELECT stale_since FROM fleet_hosts WHERE host = 'beta'") == [(None,)]
    finally:
        alpha.stop()
        beta.stop()


def test_background_writes_wait_for_the_database_in_their_order(stoppable_cluster: PostgresCluster, outage_url: str,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    db = open_database(outage_url, busy_timeout_s=BUSY_TIMEOUT_S)
    try:
        db.call_sync(lambda c: c.execute("CREATE TABLE written (seq serial PRIMARY KEY, n int)"))
        stoppable_cluster.stop_server("fast")
        for n in range(3):
            db.submit(lambda c, n=n: c.execute("INSERT INTO written (n) VALUES (?)", (n,)), f"writing {n}")
        with pytest.raises(StoreUnavailable) as refused:  # what a caller waits for fails, as ever
            asyncio.run(db.call(lambda c: c.execute("SELECT 1"), "reading"))
        assert refused.value.detail["reason"] == "unreachable"
        stoppable_cluster.start_server()
        # The first job after the return finds the kept writes written before it.
        assert db.call_sync(lambda c: c.execute("SELECT n FROM written ORDER BY seq").fetchall()) == [(0,), (1,), (2,)]

        stoppable_cluster.stop_server("fast")
        db.submit(lambda c: c.execute("INSERT INTO written (n) VALUES (3)"), "writing 3")
        with caplog.at_level(logging.ERROR, logger="muxd.store.pg_database"):
            db.close()
        assert "1 background write(s) the database could not take are lost (writing 3" in caplog.text
    finally:
        db.close()
