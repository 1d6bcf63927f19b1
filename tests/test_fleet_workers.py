"""Workers on two hosts drain one queue (issue 30): two real daemons, alpha and beta, on one
PostgreSQL database, a fake agent on each. An orchestrator's MCP client on alpha queues the tasks
and sets both agents working on them (beta's through the database, `%N@beta`); every task is done
exactly once, by one of the two, each host's agent doing some, and each turn is in the one shared
history under the host that ran it."""

from __future__ import annotations

import asyncio
import json

import pytest

from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")

TASKS = 6
DRAIN_TIMEOUT_S = 90.0  # six fake turns of a few seconds, on two agents, on a loaded machine


def _tasks(server: MuxdTestServer) -> list[dict]:
    return json.loads(server.run_here("task", "ls", "--json", check=True).stdout)["tasks"]


async def _set_to_work(alpha: MuxdTestServer, pane_id: str) -> None:
    async with mcp_session(alpha) as session:
        started = await call_ok(session, "dispatch_tasks", pane_id=pane_id, plan="fleet")
        assert [d["plan"] for d in started["dispatchers"]] == ["fleet"]


def test_workers_on_two_hosts_drain_one_queue_each_task_once(alpha: MuxdTestServer, beta: MuxdTestServer) -> None:
    here, there = start_fake_agent(alpha, "worker-a"), start_fake_agent(beta, "worker-b")
    for n in range(TASKS):
        alpha.cli("task", "add", f"write part {n} of the docs", "--plan", "fleet", check=True)
    # beta's agent first, and alpha's once beta holds a task: both hosts take part, whatever their pace.
    asyncio.run(_set_to_work(alpha, f"{there}@beta"))
    wait_until(lambda: any(t["claimed_by"] == f"agent:{there}@beta" for t in _tasks(alpha)), timeout=30,
               message="beta's agent holding a task of alpha's queue")
    asyncio.run(_set_to_work(alpha, here))

    def drained() -> list[dict] | None:
        tasks = _tasks(alpha)
        return tasks if all(t["state"] == "done" for t in tasks) else None

    tasks = wait_until(drained, timeout=DRAIN_TIMEOUT_S, message="the queue drained by both hosts' agents")
    assert len(tasks) == TASKS
    workers = {f"agent:{here}@alpha": "alpha", f"agent:{there}@beta": "beta"}
    assert {t["claimed_by"] for t in tasks} == set(workers), "each host's agent did some"
    # The one shared history: each task's turn once, under the host whose agent ran it; beta sees the same.
    history = json.loads(beta.run_here("history", "--json", "--limit", "50", check=True).stdout)["executions"]
    by_task: dict[str, list[dict]] = {}
    for execution in history:
        by_task.setdefault(execution["task_id"], []).append(execution)
    for task in tasks:
        [turn] = by_task[task["id"]]
        assert turn["status"] == "success" and turn["host"] == workers[task["claimed_by"]]
