"""A real daemon on PostgreSQL (MUXD_DB=postgresql://…, issue 30): its start opens the database
through open_database, a command pane's execution and an agent pane's turn are recorded there,
and `muxd task run` claims a task from the queue in PostgreSQL and finishes it. A daemon on SQLite
still starts without PostgreSQL's driver."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from muxd.store.pg_connection import connect as pg_connect
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

TASK_DONE_TIMEOUT_S = 60


def test_a_daemon_on_postgresql_records_executions_and_claims_tasks(postgres_url: str) -> None:
    server = MuxdTestServer(env={"MUXD_DB": postgres_url, "MUXD_HOST": "alpha"}).start()
    try:
        failed = server.cli("run", "--wait", "--", "sh", "-c", "echo building; exit 3")
        assert failed.returncode == 3 and "failed (exit 3)" in failed.stderr
        pane = start_fake_agent(server, "worker")
        server.cli("task", "add", "write the docs", check=True)
        server.cli("task", "run", "-t", pane, check=True)

        def done() -> dict | None:
            listed = json.loads(server.run_here("task", "ls", "--json", check=True).stdout)["tasks"]
            return listed[0] if listed[0]["state"] == "done" else None

        task = wait_until(done, timeout=TASK_DONE_TIMEOUT_S, message="the task claimed and done")
        history = json.loads(server.cli("history", "--json", check=True).stdout)
        assert sorted((e["kind"], e["status"]) for e in history["executions"]) == [
            ("command", "failed"), ("prompt", "success")]
        # --json rows say where they came from: this daemon's host.
        assert task["host"] == "alpha" and {e["host"] for e in history["executions"]} == {"alpha"}
        assert " through alpha" in server.run_here("task", "show", task["id"], check=True).stdout
        assert json.loads(server.cli("history", "--status", "failed", "--json", check=True).stdout)["total"] == 1
    finally:
        server.stop()
    # In PostgreSQL itself, as host alpha's rows; the claim is the pane's, its principal naming the host.
    db = pg_connect(postgres_url)
    try:
        rows = db.execute("SELECT kind, status, host, task_id FROM executions ORDER BY seq").fetchall()
        assert rows == [("command", "failed", "alpha", None), ("prompt", "success", "alpha", task["id"])]
        claimed = db.execute("SELECT state, claimed_by, host FROM tasks").fetchall()
        assert claimed == [("done", f"agent:{pane}@alpha", "alpha")]
    finally:
        db.close()


def test_a_sqlite_daemons_start_never_loads_postgresqls_driver(tmp_path: Path) -> None:
    script = ("import sys\nfrom muxd.daemon.main import _opening_database\n"
              "_opening_database('lean').result().close()\n"
              "print([m for m in ('psycopg', 'muxd.store.pg_database', 'muxd.store.pg_history_sql') if m in sys.modules])")
    env = {"MUXD_DB": str(tmp_path / "lean.db"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    ran = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=stretched(30), check=True)
    assert ran.stdout.strip() == "[]" and (tmp_path / "lean.db").exists()


def test_no_command_of_a_sqlite_daemon_loads_postgresqls_driver() -> None:
    """Every command module (those a daemon loads after its first reply) leaves psycopg unloaded:
    what only a shared database needs (host_link.py, pg_listen.py) is imported where it is used."""
    script = ("import sys\nfrom muxd.daemon.commands import CommandTable\nCommandTable().load_all()\n"
              "print([m for m in ('psycopg', 'muxd.store.pg_listen', 'muxd.daemon.work.host_link') if m in sys.modules])")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=stretched(30),
                         check=True)
    assert ran.stdout.strip() == "[]"
