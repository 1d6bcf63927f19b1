"""The history survives the daemon: `kill -9` while an execution runs loses no committed row, and
the running one is `interrupted` once the store is opened again. A clean stop records the same."""

from __future__ import annotations

import json
import os
import signal

from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until


def history(server: MuxdTestServer, *args: str) -> list[dict]:
    return json.loads(server.cli("history", "--json", "--limit", "100", *args, check=True).stdout)["executions"]


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
