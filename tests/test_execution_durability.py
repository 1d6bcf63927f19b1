"""The history survives the daemon: `kill -9` while an execution runs loses no committed row, and
the running one is `interrupted` once the store is opened again. A clean stop records the same.
A database another process holds loses no execution either: it waits in memory, found by lookups,
until written (without a restart), and a stop that still cannot write it says what it lost."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3

from muxd.protocol.execution_messages import ExecutionList, WaitExecutions
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until


def history(server: MuxdTestServer, *args: str) -> list[dict]:
    """Read back in this process (waits poll it: a CLI a look is a load of its own)."""
    return json.loads(server.run_here("history", "--json", "--limit", "100", *args, check=True).stdout)["executions"]


def _run_some_and_hold_one(server: MuxdTestServer) -> str:
    pane = start_fake_agent(server, "worker")
    for n in range(3):
        done = json.loads(server.cli("submit", "-t", "worker", f"task {n}", "--wait", "--json", check=True).stdout)
        assert done["status"] == "success"
    # `tool` makes the fake agent ask for approval: its turn keeps running.
    held = json.loads(server.cli("submit", "-t", "worker", "tool", "--json", check=True).stdout)
    wait_until(lambda: history(server, "--active") and history(server, "--active")[0]["status"] == "running",
               timeout=10, message="the held execution running")
    assert pane
    return held["id"]


def test_kill_9_loses_no_committed_row_and_the_running_one_is_interrupted(muxd_server):
    server = muxd_server
    held = _run_some_and_hold_one(server)
    os.kill(server.pid, signal.SIGKILL)
    wait_until(lambda: not server.running(), timeout=10, message="the daemon gone")
    server.start()
    rows = {e["message"]: e for e in history(server)}
    assert {rows[f"task {n}"]["status"] for n in range(3)} == {"success"}
    assert rows["tool"]["id"] == held and rows["tool"]["status"] == "interrupted"
    assert rows["tool"]["error"]["type"] == "interrupted" and rows["tool"]["completed_at"]
    shown = json.loads(server.cli("show", held, "--json", check=True).stdout)["execution"]
    assert shown["status"] == "interrupted"


def test_kill_server_records_what_ran_as_interrupted(muxd_server):
    server = muxd_server
    held = _run_some_and_hold_one(server)
    server.cli("kill-server", check=True)
    wait_until(lambda: not server.running(), timeout=10, message="the daemon gone")
    server.start()
    assert next(e for e in history(server) if e["id"] == held)["status"] == "interrupted"


LOCKED_RUN_TIMEOUT_S = 120.0  # each write the daemon tries waits out its busy timeout (conftest.py)
WRITTEN_AGAIN_WITHIN_S = 90.0
WAIT_S = 30.0


async def _wait_for(server: MuxdTestServer, execution_id: str) -> ExecutionList:
    client = await server.client()
    try:
        return await client.call(WaitExecutions, execution_ids=[execution_id], timeout_s=WAIT_S)
    finally:
        await client.close()


def _status(server: MuxdTestServer) -> dict:
    return json.loads(server.cli("server", "status", "--json", check=True).stdout)


def test_a_locked_database_loses_no_execution_and_writes_it_once_released(held_db_server):
    server = held_db_server
    other = sqlite3.connect(server.env["MUXD_DB"], isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # another process holding the database
        ran = server.cli("run", "--wait", "--json", "--", "echo", "x", timeout=LOCKED_RUN_TIMEOUT_S)
        assert ran.returncode == 0, ran.stderr
        execution = json.loads(ran.stdout)
        assert execution["status"] == "success" and execution["exit_code"] == 0
        shown = json.loads(server.cli("show", execution["id"], "--json", check=True).stdout)["execution"]
        assert shown["status"] == "success"
        listed = server.cli("history")
        assert listed.returncode != 0 and "the history is incomplete: 1 execution(s) wait in memory" in listed.stderr
        assert "locked" in listed.stderr and len(listed.stderr.strip().splitlines()) == 1
        assert _status(server)["unwritten_executions"] == 1
        waited = asyncio.run(_wait_for(server, execution["id"]))  # MCP wait_for's request
        assert not waited.timed_out and [e.status for e in waited.executions] == ["success"]
    finally:
        other.execute("ROLLBACK")
        other.close()
    rows = wait_until(lambda: server.cli("history", "--json").returncode == 0 and history(server),
                      timeout=WRITTEN_AGAIN_WITHIN_S, message="the row written without a restart")
    assert [(e["id"], e["status"]) for e in rows] == [(execution["id"], "success")]
    assert _status(server)["unwritten_executions"] == 0


def test_a_clean_stop_under_a_lock_names_what_it_could_not_write(held_db_server):
    server = held_db_server
    other = sqlite3.connect(server.env["MUXD_DB"], isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        ran = server.cli("run", "--wait", "--json", "--", "echo", "x", timeout=LOCKED_RUN_TIMEOUT_S)
        execution_id = json.loads(ran.stdout)["id"]
        server.cli("kill-server", check=True)
        wait_until(lambda: not server.running(), timeout=LOCKED_RUN_TIMEOUT_S, message="the daemon gone")
    finally:
        other.execute("ROLLBACK")
        other.close()
    said = server.log_path.read_text()
    assert "execution(s) could not be written before the daemon stopped and are lost" in said
    assert f"history: lost {execution_id} (success, agent %0, pane %0): echo x" in said


def test_a_persons_running_turn_put_off_is_written_for_whoever_reads_the_history(muxd_server):
    server = muxd_server
    pane = start_fake_agent(server, "typed")
    server.cli("send-keys", "-t", pane, "tool", "Enter", check=True)  # a person's turn, held by its question
    wait_until(lambda: history(server, "--active"), timeout=10, message="the person's turn running (in memory)")
    # Its row waits to be written with its end; a query of the store has it written first.
    rows = history(server)
    assert [(e["status"], e["triggered_by"]) for e in rows] == [("running", "manual")], rows
    os.kill(server.pid, signal.SIGKILL)  # so it was committed: the next start finds it
    wait_until(lambda: not server.running(), timeout=10, message="the daemon gone")
    server.start()
    assert [e["status"] for e in history(server)] == ["interrupted"]
