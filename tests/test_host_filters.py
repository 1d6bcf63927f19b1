"""The optional host filter of the history's and the queue's requests and MCP tools (issue 30),
on a real daemon: MUXD_HOST names its rows, a filter of that host answers them all, another
host's none, and no filter answers the fleet (here, the one daemon)."""

from __future__ import annotations

import asyncio
import json

from muxd.client.connection import Client
from muxd.protocol.execution_messages import ExecutionStats, ListExecutions
from muxd.protocol.task_messages import CreateTask, ListTasks, NextActionable
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.server import MuxdTestServer


def test_requests_filter_by_host_and_answer_the_fleet_by_default() -> None:
    server = MuxdTestServer(env={"MUXD_HOST": "alpha"}).start()
    try:
        server.cli("run", "--wait", "--", "true", check=True)

        async def ask() -> None:
            client = await Client.connect(server.socket_path)
            try:
                await client.call(CreateTask, title="build")
                for host, found in ((None, 1), ("alpha", 1), ("beta", 0)):
                    executions = await client.call(ListExecutions, host=host)
                    assert (len(executions.executions), executions.total) == (found, found), host
                    tasks = await client.call(ListTasks, host=host)
                    assert [t.title for t in tasks.tasks] == ["build"] * found, host
                    ready = await client.call(NextActionable, host=host)
                    assert len(ready.actionable) == found, host
                    stats = await client.call(ExecutionStats, host=host)
                    assert sum(s.total for s in stats.agents) == found, host
            finally:
                await client.close()

        async def ask_mcp() -> None:
            async with mcp_session(server) as session:
                for host, found in ((None, 1), ("alpha", 1), ("beta", 0)):
                    args = {} if host is None else {"host": host}
                    recent = await call_ok(session, "list_recent_executions", **args)
                    assert recent["total_count"] == found and recent["filters_applied"]["host"] == host
                    assert (await call_ok(session, "list_tasks", **args))["total"] == found
                    assert (await call_ok(session, "get_next_actionable", **args))["count"] == found
                    summary = await call_ok(session, "get_agent_activity_summary", **args)
                    assert summary["commands"]["total_executions"] == found, summary
                assert "bad_request" in await call_error(session, "list_tasks", host="")

        asyncio.run(ask())
        asyncio.run(ask_mcp())
        for host, found in (("alpha", 1), ("beta", 0)):
            listed = json.loads(server.cli("history", "--host", host, "--json", check=True).stdout)
            assert listed["total"] == found
            assert json.loads(server.cli("task", "ls", "--host", host, "--json", check=True).stdout)["total"] == found
    finally:
        server.stop()
