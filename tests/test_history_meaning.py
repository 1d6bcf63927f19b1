"""One meaning per word in the execution history (issue 27, items 1, 3, 4), end to end: a real
daemon, fake agent CLIs and real commands in real panes, `muxd mcp` over stdio through the real
MCP SDK client.

- "failed" is the failure family (failed + timeout + interrupted) in every count and every filter,
  each row keeping its exact status;
- the fleet summary counts agent panes as agents and `muxd run` windows apart, as commands;
- a pane agent's own token is recorded as triggered_by "agent", and the principal is shown.
"""

from __future__ import annotations

import asyncio
import json

from muxd.testing.fake_agent_panes import start_fake_agent as start_agent
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer

TURN_WAIT_S = 25


async def _failed_is_one_thing(server: MuxdTestServer) -> None:
    start_agent(server, "slow")
    async with mcp_session(server) as session:
        # A turn held at its tool approval outlives its 1 s limit: the only failure is a timeout.
        held = await call_ok(session, "send_task", pane_id="slow", message="tool", task_id="t-slow", timeout_s=1,
                             wait=True, wait_timeout_s=TURN_WAIT_S)
        assert held["execution"]["status"] == "timeout"
        # Seed 003's debugging workflow: the newest failure, then that task's failures.
        last = await call_ok(session, "tasks_last_failed")
        assert [f["status"] for f in last["failures"]] == ["timeout"]
        task = last["failures"][0]["task_id"]
        assert task == "t-slow"
        listed = await call_ok(session, "tasks_list", task_id=task, status="failed")
        assert listed["total"] == 1 and [e["status"] for e in listed["executions"]] == ["timeout"]

        # The exact scenario: 3 failed commands and 1 timeout.
        ids = [(await call_ok(session, "create_pane", command=["sh", "-c", f"exit {n}"]))["execution_id"]
               for n in (1, 2, 3)]
        await call_ok(session, "wait_for", execution_id=ids, timeout_s=TURN_WAIT_S)
        recent = await call_ok(session, "list_recent_executions", status="failed")
        assert recent["total_count"] == 4
        assert sorted(e["status"] for e in recent["executions"]) == ["failed", "failed", "failed", "timeout"]
        assert (await call_ok(session, "tasks_list", status="failed"))["total"] == 4
        # A status other than failed still selects itself alone.
        assert (await call_ok(session, "list_recent_executions", status="timeout"))["total_count"] == 1
        fleet = await call_ok(session, "get_agent_activity_summary")
        # The agent's timeout and the commands' failures, counted apart, add up to the same 4.
        assert fleet["fleet_summary"]["failed"] == 1 and fleet["commands"]["failed"] == 3
        assert sorted(f["status"] for f in fleet["recent_failures"]) == ["failed", "failed", "failed", "timeout"]
        failures = await call_ok(session, "tasks_last_failed", limit=10)
        assert len(failures["failures"]) == 4
        one = await call_ok(session, "get_agent_activity_summary", agent_name="slow")
        assert one["summary"]["failed"] == 1 and one["summary"]["cancelled"] == 0
    # The CLI's filter says the same.
    history = json.loads(server.cli("history", "--status", "failed", "--json", check=True).stdout)
    assert history["total"] == 4


def test_failed_means_every_failure_in_every_count_and_filter(muxd_server):
    asyncio.run(_failed_is_one_thing(muxd_server))


async def _agents_and_commands(server: MuxdTestServer) -> None:
    for name, agent in (("a1", "claude"), ("a2", "codex"), ("a3", "gemini")):
        start_agent(server, name, agent)
    for code in (0, 0, 1, 0):
        server.cli("run", "--wait", "--", "sh", "-c", f"exit {code}")
    async with mcp_session(server) as session:
        sent = await call_ok(session, "send_task", pane_id="a1", message="hello", wait=True,
                             wait_timeout_s=TURN_WAIT_S)
        assert sent["execution"]["status"] == "success"
        fleet = await call_ok(session, "get_agent_activity_summary")
        summary = fleet["fleet_summary"]
        assert summary["total_agents"] == 3 and summary["total_executions"] == 1 and summary["successful"] == 1
        assert {(a["agent_name"], a["agent_type"]) for a in fleet["by_agent"]} == {
            ("a1", "claude"), ("a2", "codex"), ("a3", "gemini")}
        commands = fleet["commands"]
        assert (commands["total_executions"], commands["successful"], commands["failed"], commands["panes"]) == (
            4, 3, 1, 4)
        one = await call_ok(session, "get_agent_activity_summary", agent_name="a2")
        assert one["summary"]["is_agent"] and one["summary"]["agent_type"] == "codex"
        assert one["commands"]["total_executions"] == 0


def test_the_fleet_counts_agent_panes_and_reports_commands_apart(muxd_server):
    asyncio.run(_agents_and_commands(muxd_server))


def _pane_token(server: MuxdTestServer, session: str) -> tuple[str, str]:
    """A new shell pane that shows its own MUXD_TOKEN: (its id, the token)."""
    server.cli("new-session", "-d", "-s", session, "--", "sh", "-c", 'echo "token=$MUXD_TOKEN."; exec cat',
               check=True)
    text = server.wait_for_text(session, "token=muxd_")
    return server.panes(session)[0]["id"], text.split("token=", 1)[1].split(".", 1)[0]


async def _agent_trigger(server: MuxdTestServer) -> None:
    worker = start_agent(server, "worker")
    lead, token = _pane_token(server, "lead")
    server.cli("grant", "-t", worker, "--to", lead, check=True)  # the lead pane's agent may use the worker
    async with mcp_session(server, MUXD_TOKEN=token) as session:
        by_agent = await call_ok(session, "send_task", pane_id=worker, message="from the lead", wait=True,
                                 wait_timeout_s=TURN_WAIT_S)
    async with mcp_session(server) as session:
        by_system = await call_ok(session, "send_task", pane_id=worker, message="from the owner", wait=True,
                                  wait_timeout_s=TURN_WAIT_S)
        rows = {e["id"]: e for e in (await call_ok(session, "list_recent_executions"))["executions"]}
        assert (rows[by_agent["execution_id"]]["triggered_by"], rows[by_agent["execution_id"]]["principal"]) == (
            "agent", f"agent:{lead}")
        assert (rows[by_system["execution_id"]]["triggered_by"], rows[by_system["execution_id"]]["principal"]) == (
            "mcp", "system")
        agents_only = await call_ok(session, "list_recent_executions", triggered_by="agent")
        assert [e["id"] for e in agents_only["executions"]] == [by_agent["execution_id"]]
        detail = (await call_ok(session, "get_execution_result", agent_name="worker",
                                execution_id=by_agent["execution_id"]))["execution"]
        assert (detail["triggered_by"], detail["principal"]) == ("agent", f"agent:{lead}")
        [task_row] = (await call_ok(session, "tasks_list", limit=1, offset=1))["executions"]
        assert task_row["principal"] == f"agent:{lead}"


def test_a_pane_agents_own_token_is_recorded_as_agent_with_its_principal(muxd_server):
    asyncio.run(_agent_trigger(muxd_server))
