"""Who sees which executions (seed 000 R1.3/R2.3, seed 004 FR-013.6), denied and allowed, over
stdio and HTTP: `system` everything; a pane-bound token its panes' executions and those it
triggered; a token's tool history its own unless admin."""

from __future__ import annotations

import asyncio
import json

from muxd.testing.fake_agent_panes import start_fake_agent as start_agent
from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until


async def _scopes(server: MuxdTestServer) -> None:
    a, b = start_agent(server, "alpha"), start_agent(server, "beta")
    bound = create_token(server, "execute_advanced", "alpha-owner", "--pane", a)
    watcher = create_token(server, "view_only", "watcher")
    async with mcp_session(server) as system:
        on_b = await call_ok(system, "send_task", pane_id=b, message="system's work on beta", wait=True,
                             wait_timeout_s=20)
        assert on_b["execution"]["status"] == "success"
    async with mcp_session(server, MUXD_TOKEN=bound) as session:
        mine = await call_ok(session, "send_task", pane_id=a, message="alpha work", wait=True, wait_timeout_s=20)
        listed = await call_ok(session, "list_recent_executions")
        assert [e["id"] for e in listed["executions"]] == [mine["execution_id"]]
        # Another pane's execution: the same answer as one that does not exist.
        assert "not_found" in await call_error(session, "get_execution_result", agent_name="beta",
                                               execution_id=on_b["execution_id"])
        # A short id or prefix names only what it may see: beta's neither counts nor shows.
        assert "not_found" in await call_error(session, "get_execution_result", agent_name="beta",
                                               execution_id=on_b["execution_id"][-8:])
        named = await call_ok(session, "get_execution_result", agent_name="alpha", execution_id="exec_1")
        assert named["execution"]["id"] == mine["execution_id"]
        assert "forbidden" in await call_error(session, "send_task", pane_id=b, message="not mine")
        fleet = await call_ok(session, "get_agent_activity_summary")
        assert [a["agent_name"] for a in fleet["by_agent"]] == ["alpha"]
        # Granted beta, it works there; after the grant is revoked it still sees what it triggered, only that.
        server.cli("grant", "-t", b, "--to", "alpha-owner", check=True)
        triggered = await call_ok(session, "send_task", pane_id=b, message="beta, for alpha's owner", wait=True,
                                  wait_timeout_s=20)
        assert len((await call_ok(session, "list_recent_executions"))["executions"]) == 3
        server.cli("grant", "--revoke", "-t", b, "--to", "alpha-owner", check=True)
        seen = {e["id"] for e in (await call_ok(session, "list_recent_executions"))["executions"]}
        assert seen == {mine["execution_id"], triggered["execution_id"]}
        await call_ok(session, "get_execution_result", agent_name="beta", execution_id=triggered["execution_id"])
        # Its tool history is its own.
        calls = await call_ok(session, "get_tool_history", limit=200)
        assert {c["principal"] for c in calls["calls"]} == {"token:alpha-owner"}
    async with mcp_session(server, MUXD_TOKEN=watcher) as session:
        # Unbound: it may see every pane, so every execution; view_only: it may not send or cancel.
        assert (await call_ok(session, "list_recent_executions"))["total_count"] == 3
        assert "forbidden" in await call_error(session, "send_task", pane_id=a, message="no")
        # The fix on the way: an unbound view_only token reads its own tool calls, not system's.
        calls = await call_ok(session, "get_tool_history", limit=200)
        assert calls["calls"] and {c["principal"] for c in calls["calls"]} == {"token:watcher"}
        assert "forbidden" in await call_error(session, "get_tool_history", principal="system")


def test_each_principal_sees_the_executions_it_may(muxd_server):
    asyncio.run(_scopes(muxd_server))


async def _over_http(server: MuxdTestServer) -> None:
    a, b = start_agent(server, "h-alpha"), start_agent(server, "h-beta")
    bound = create_token(server, "execute_advanced", "h-owner", "--pane", a)
    admin = create_token(server, "admin", "h-admin")
    mcp = HttpMcp(server)
    try:
        async with mcp.session(admin) as session:
            other = await call_ok(session, "send_task", pane_id=b, message="admin on beta", wait=True,
                                  wait_timeout_s=20)
        async with mcp.session(bound) as session:
            mine = await call_ok(session, "send_task", pane_id=a, message="owner on alpha", wait=True,
                                 wait_timeout_s=20)
            rows = (await call_ok(session, "tasks_list"))["executions"]
            assert [r["id"] for r in rows] == [mine["execution_id"]]
            assert "not_found" in await call_error(session, "cancel_execution", execution_id=other["execution_id"])
        async with mcp.session(admin) as session:
            assert (await call_ok(session, "tasks_list"))["total"] == 2
    finally:
        mcp.stop()


def test_scopes_hold_over_http(muxd_server):
    asyncio.run(_over_http(muxd_server))


async def _keys(server: MuxdTestServer) -> None:
    """Idempotency keys belong to (principal, pane): another principal's key, or the same key for
    another pane, is another key; the same key again with another message is a conflict."""
    a, b = start_agent(server, "k-alpha"), start_agent(server, "k-beta")
    worker = create_token(server, "execute_advanced", "k-worker", "--pane", a)
    async with mcp_session(server, MUXD_TOKEN=worker) as session:
        # The worker takes the orchestrator's predictable key first, on its own pane.
        squatted = await call_ok(session, "send_task", pane_id=a, message="worker's", idempotency_key="deploy-7-1",
                                 wait=True, wait_timeout_s=20)
        assert squatted["created"] and squatted["execution"]["status"] == "success"
    async with mcp_session(server) as orchestrator:
        sent = await call_ok(orchestrator, "send_task", pane_id=b, message="deploy 7", idempotency_key="deploy-7-1",
                             wait=True, wait_timeout_s=20)
        assert sent["created"] and sent["execution_id"] != squatted["execution_id"] and sent["pane_id"] == b
        assert sent["execution"]["message"] == "deploy 7" and sent["execution"]["status"] == "success"
        again = await call_ok(orchestrator, "send_task", pane_id=b, message="deploy 7", idempotency_key="deploy-7-1")
        assert (again["execution_id"], again["created"]) == (sent["execution_id"], False)
        # The same key for another pane is another key; with another message on the same pane, a conflict.
        elsewhere = await call_ok(orchestrator, "send_task", pane_id=a, message="deploy 7", idempotency_key="deploy-7-1",
                                  wait=True, wait_timeout_s=20)
        assert elsewhere["created"] and elsewhere["execution_id"] not in (sent["execution_id"], squatted["execution_id"])
        refused = await call_error(orchestrator, "send_task", pane_id=b, message="deploy 8",
                                   idempotency_key="deploy-7-1")
        assert refused.startswith("conflict") and sent["execution_id"] in refused and "\n" not in refused, refused
    async with mcp_session(server, MUXD_TOKEN=worker) as session:
        # The worker's key on its pane is still its own execution, not the orchestrator's there.
        mine = await call_ok(session, "send_task", pane_id=a, message="worker's", idempotency_key="deploy-7-1")
        assert (mine["execution_id"], mine["created"]) == (squatted["execution_id"], False)


def test_an_idempotency_key_is_the_principals_on_one_pane(muxd_server):
    asyncio.run(_keys(muxd_server))


async def _cancel(server: MuxdTestServer) -> None:
    """Seed 004 FR-012.2 / AC-005: only the principal that started an execution, or an admin,
    cancels it; everyone else gets forbidden naming whose it is."""
    a = start_agent(server, "c-alpha")
    unbound = create_token(server, "execute_advanced", "c-other")
    bound = create_token(server, "execute_advanced", "c-pane", "--pane", a)
    admin = create_token(server, "admin", "c-admin")
    async with mcp_session(server) as system:
        held = await call_ok(system, "send_task", pane_id=a, message="tool")  # waits for approval: keeps running
        queued = await call_ok(system, "send_task", pane_id=a, message="after the tool")
    async with mcp_session(server, MUXD_TOKEN=unbound) as session:
        refused = await call_error(session, "cancel_execution", execution_id=held["execution_id"])
        assert refused == (f"forbidden: execution {held['execution_id']} was started by system: only system or an "
                           "admin may cancel it"), refused
        mine = await call_ok(session, "send_task", pane_id=a, message="token's, queued")
        assert (await call_ok(session, "cancel_execution", execution_id=mine["execution_id"]))["cancelled"]
    async with mcp_session(server, MUXD_TOKEN=bound) as session:
        # Its own pane, another's execution: forbidden as well.
        assert "forbidden" in await call_error(session, "cancel_execution", execution_id=queued["execution_id"])
    async with mcp_session(server, MUXD_TOKEN=admin) as session:
        for execution in (queued, held):
            assert (await call_ok(session, "cancel_execution", execution_id=execution["execution_id"]))["cancelled"]
    # A command line a person typed (no principal): the socket owner's, so an admin's to cancel.
    shell = server.cli("new-session", "-d", "-P", "-s", "c-sh", check=True).stdout.strip()
    wait_until(lambda: server.cli("run", "-t", shell, "--wait", "--", "true").returncode == 0 or None,
               timeout=15, interval=0.5, message="the shell writes prompt marks")
    server.cli("send-keys", "-t", shell, "sleep 60", "Enter", check=True)
    typed = wait_until(lambda: [e for e in _active(server) if e["message"] == "sleep 60"], timeout=15,
                       message="the typed command running")[0]
    assert typed["principal"] is None and typed["triggered_by"] == "manual"
    refused = server.cli("--token", unbound, "cancel", typed["id"])
    assert refused.returncode != 0 and refused.stderr.strip().splitlines()[-1] == (  # after --token's warning
        f"muxd: execution {typed['id']} was typed by a person in the pane: only an admin may cancel it")
    assert server.cli("cancel", typed["id"], check=True).stdout.split() == [typed["id"], "cancelled"]


def _active(server: MuxdTestServer) -> list[dict]:
    return json.loads(server.cli("history", "--active", "--json", check=True).stdout)["executions"]


def test_only_the_owner_or_an_admin_cancels(muxd_server):
    asyncio.run(_cancel(muxd_server))
