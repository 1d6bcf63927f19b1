"""The queue survives the daemon: after `kill -9` no task is lost, claims keep their holders and
their leases keep running (wall-clock deadlines), and a check that was running runs again."""

from __future__ import annotations

import asyncio
import json
import os
import signal

from muxd.client.connection import Client
from muxd.protocol.task_messages import ClaimTask, CompleteTask
from muxd.testing.mcp_http import create_token
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until


def tasks(server: MuxdTestServer) -> dict[str, dict]:
    listed = json.loads(server.cli("task", "ls", "--json", "--limit", "100", check=True).stdout)
    return {t["title"]: t for t in listed["tasks"]}


def test_kill_9_loses_no_task_and_leases_keep_running(muxd_server, tmp_path):
    server = muxd_server
    token = create_token(server, "execute_advanced", "holder")
    for title in ("one", "two", "three"):
        server.cli("task", "add", title, check=True)
    gate = tmp_path / "go"
    server.cli("task", "add", "checked", "--verify-cmd", f"while [ ! -f {gate} ]; do sleep 0.05; done",
               check=True)
    before = tasks(server)

    async def work() -> None:
        client = await Client.connect(server.socket_path, token=token)
        try:
            await client.call(ClaimTask, task_id=before["one"]["id"], lease_s=600)
            await client.call(ClaimTask, task_id=before["checked"]["id"])
            await client.call(CompleteTask, task_id=before["checked"]["id"])
        finally:
            await client.close()

    asyncio.run(work())
    wait_until(lambda: tasks(server)["checked"]["verification_result"]["status"] == "running", timeout=15,
               message="the check running")
    held = tasks(server)
    os.kill(server.pid, signal.SIGKILL)
    wait_until(lambda: not server.running(), timeout=10, message="the daemon gone")
    gate.touch()  # the check will pass when it runs again
    server.start()
    after = tasks(server)
    assert set(after) == set(before)
    assert after["one"]["state"] == "claimed" and after["one"]["claimed_by"] == "token:holder"
    assert after["one"]["lease_expires_at"] == held["one"]["lease_expires_at"]
    assert {after[t]["state"] for t in ("two", "three")} == {"ready"}
    done = wait_until(lambda: (t := tasks(server)["checked"])["state"] == "done" and t, timeout=30,
                      message="the interrupted check run again, and passing")
    assert done["verification_result"]["status"] == "passed"
