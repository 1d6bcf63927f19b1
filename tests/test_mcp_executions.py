"""The execution tools end to end: a real daemon, fake agent CLIs in real panes, `muxd mcp` over
stdio driven by the real MCP SDK client; the history in a real SQLite file (seeds 000, 003, 004)."""

from __future__ import annotations

import asyncio

from muxd.testing.fake_agent_panes import start_fake_agent as start_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session, wait_budget_s
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

FIX_TRACE = "6e0c63257de34c926f9efcd03919e5b3"  # W3C trace id of the retried task


async def result(session, agent: str, execution_id: str, **extra) -> dict:
    return (await call_ok(session, "get_execution_result", agent_name=agent, execution_id=execution_id,
                          **extra))["execution"]


async def _async_task_then_result(server: MuxdTestServer) -> None:
    start_agent(server, "researcher")
    async with mcp_session(server) as session:
        sent = await call_ok(session, "send_task", pane_id="researcher", message="summarise the repo",
                             task_id="t-sum", trace_id="5b8aa5a2d2c872e8321cf37308d69df2", attempt=1)
        assert sent["status"] == "running" and sent["execution_id"].startswith("exec_") and sent["created"]
        active = await call_ok(session, "list_active_executions")
        assert [e["id"] for e in active["executions"]] == [sent["execution_id"]]
        # An execution's short id (the start of its random tail, as `muxd history` shows) names it too.
        waited = await call_ok(session, "wait_for", execution_id=sent["execution_id"][-8:], timeout_s=20)
        assert waited["matched"] and waited["executions"][0]["status"] == "success"
        done = await result(session, "researcher", sent["execution_id"][-8:-2], include_transcript=True)
        assert done["id"] == sent["execution_id"]
        assert done["status"] == "success" and done["message"] == "summarise the repo"
        assert done["duration_seconds"] > 1 and done["tokens_used"] and done["sources"]["tokens_used"] == "screen"
        assert "summarise the repo" in done["transcript"] and done["transcript_bytes"] > 0
        recent = await call_ok(session, "list_recent_executions", agent_name="researcher")
        assert recent["total_count"] == 1 and recent["executions"][0]["id"] == sent["execution_id"]
        assert recent["filters_applied"] == {"hours": 24, "status": None, "agent_name": "researcher",
                                             "triggered_by": None, "host": None}
        # The same idempotency key twice: one execution.
        first = await call_ok(session, "send_task", pane_id="researcher", message="again", idempotency_key="k1",
                              wait=True, wait_timeout_s=20)
        second = await call_ok(session, "send_task", pane_id="researcher", message="again", idempotency_key="k1")
        assert first["execution"]["status"] == "success"
        assert second["execution_id"] == first["execution_id"] and not second["created"]
        # Wrong agent for an id, unknown id: not_found.
        assert "not_found" in await call_error(session, "get_execution_result", agent_name="nobody",
                                               execution_id=sent["execution_id"])
        assert "not_found" in await call_error(session, "get_execution_result", agent_name="researcher",
                                               execution_id="exec_1_deadbeef")


def test_an_async_task_is_polled_to_its_result(muxd_server):
    asyncio.run(_async_task_then_result(muxd_server))


async def _queue_cancel_and_fleet(server: MuxdTestServer) -> None:
    start_agent(server, "w1")
    start_agent(server, "w2", "codex")
    async with mcp_session(server) as session:
        # A prompt that waits for approval keeps w1's turn running; the next ones queue behind it.
        held = await call_ok(session, "send_task", pane_id="w1", message="tool")
        queued = await call_ok(session, "send_task", pane_id="w1", message="after the tool")
        dropped = await call_ok(session, "send_task", pane_id="w1", message="never runs")
        assert (queued["status"], dropped["status"]) == ("pending", "pending")
        summary = await call_ok(session, "get_agent_activity_summary", agent_name="w1")
        assert summary["summary"]["is_busy"] and summary["summary"]["queue_length"] == 2
        cancelled = await call_ok(session, "cancel_execution", execution_id=dropped["execution_id"][-8:])
        assert cancelled["status"] == "cancelled"
        stopped = await call_ok(session, "cancel_execution", execution_id=held["execution_id"])
        assert stopped["status"] == "cancelled"
        assert "conflict" in await call_error(session, "cancel_execution", execution_id=held["execution_id"])
        # The queued one runs once w1 is back at its prompt; w2 works meanwhile: wait for both.
        other = await call_ok(session, "send_task", pane_id="w2", message="write the tests")
        both = await call_ok(session, "wait_for", execution_id=[queued["execution_id"], other["execution_id"]],
                             timeout_s=25)
        assert both["matched"], both
        assert {e["status"] for e in both["executions"]} == {"success"}
        fleet = await call_ok(session, "get_agent_activity_summary")
        assert fleet["fleet_summary"]["total_executions"] == 4
        assert fleet["fleet_summary"]["successful"] == 2 and fleet["fleet_summary"]["total_agents"] == 2
        by_agent = {a["agent_name"]: a for a in fleet["by_agent"]}
        assert by_agent["w1"]["executions"] == 3 and by_agent["w2"]["success_rate"] == 100.0
        assert by_agent["w1"]["status"] == "idle" and by_agent["w1"]["queue_length"] == 0
        cancelled_rows = await call_ok(session, "list_recent_executions", status="cancelled")
        assert cancelled_rows["total_count"] == 2


def test_queued_tasks_run_in_order_cancel_works_and_the_fleet_adds_up(muxd_server):
    asyncio.run(_queue_cancel_and_fleet(muxd_server))


async def _failures_and_traces(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        ids = []
        for attempt in (1, 2):  # the same failure twice, from two panes, minutes of difference aside
            pane = await call_ok(session, "create_pane", command=["sh", "-c", f"echo try {attempt}; exit 3"])
            assert pane["execution_id"]
            ids.append(pane["execution_id"])
        ok = await call_ok(session, "create_pane", command=["sh", "-c", "exit 0"])
        await call_ok(session, "wait_for", execution_id=[*ids, ok["execution_id"]],
                      timeout_s=wait_budget_s(10))
        failed = await call_ok(session, "tasks_last_failed")
        assert {f["id"] for f in failed["failures"]} == set(ids)
        assert all(f["error"]["type"] == "exit_status" for f in failed["failures"])
        [pattern] = failed["error_patterns"]
        assert pattern["count"] == 2 and pattern["stack_hash"] == failed["failures"][0]["error"]["stack_hash"]
        unique = await call_ok(session, "tasks_last_failed", unique_errors=True)
        assert len(unique["failures"]) == 1
        listed = await call_ok(session, "tasks_list", status="failed", limit=1)
        assert listed["total"] == 2 and listed["has_more"] and len(listed["executions"]) == 1
        row = listed["executions"][0]
        assert set(row) >= {"id", "task_id", "task_slug", "task_name", "status", "started_at", "ended_at",
                            "duration_ms", "trace_id", "span_id", "attempt", "error", "retrieval", "io", "backfilled"}
        assert "bad_request" in await call_error(session, "tasks_list", since="yesterday")
        assert (await call_ok(session, "tasks_by_trace", trace_id="none"))["final_status"] is None


def test_failures_group_by_stack_hash_and_lists_page(muxd_server):
    asyncio.run(_failures_and_traces(muxd_server))


async def _retries(server: MuxdTestServer) -> None:
    start_agent(server, "fixer")
    async with mcp_session(server) as session:
        for attempt in (1, 2):
            await call_ok(session, "send_task", pane_id="fixer", message=f"fix it, try {attempt}", trace_id=FIX_TRACE,
                          span_id=f"{attempt:016x}", attempt=attempt, wait=True, wait_timeout_s=20)
        trace = await call_ok(session, "tasks_by_trace", trace_id=FIX_TRACE)
        assert trace["retry_count"] == 1 and trace["final_status"] == "success"
        assert [e["attempt"] for e in trace["executions"]] == [1, 2]


def test_a_retried_task_shows_in_its_trace(muxd_server):
    asyncio.run(_retries(muxd_server))


async def _wait_for_panes(server: MuxdTestServer) -> None:
    a, b = start_agent(server, "a"), start_agent(server, "b")
    async with mcp_session(server) as session:
        got = await call_ok(session, "wait_for", pane_id=[a, b], state="Idle", timeout_s=wait_budget_s(5))
        assert got["matched"] and [p["pane_id"] for p in got["panes"]] == [a, b]
        missing = await call_ok(session, "wait_for", pane_id=[a, b], state="Thinking", mode="any", timeout_s=0.5)
        assert not missing["matched"] and missing["reason"] == "timed_out"
        assert "bad_request" in await call_error(session, "wait_for", execution_id="x", pane_id=a)


def test_wait_for_takes_several_panes(muxd_server):
    asyncio.run(_wait_for_panes(muxd_server))


async def _manual(server: MuxdTestServer) -> None:
    pane = start_agent(server, "typed")
    server.cli("send-keys", "-t", pane, "think", "Enter", check=True)
    async with mcp_session(server) as session:
        async def recorded() -> bool:
            rows = (await call_ok(session, "list_recent_executions", triggered_by="manual"))["executions"]
            return bool(rows) and rows[0]["status"] == "success"

        await async_wait_until(recorded, timeout=20, interval=0.5, message="a manual execution recorded")


def test_a_prompt_typed_by_a_person_is_a_manual_execution(muxd_server):
    asyncio.run(_manual(muxd_server))


async def _screen_answer(server: MuxdTestServer) -> None:
    start_agent(server, "screen-only", "gemini")  # a fake agent keeps no session log: the screen is the source
    async with mcp_session(server) as session:
        sent = await call_ok(session, "send_task", pane_id="screen-only", message="what is it", wait=True,
                             wait_timeout_s=20)
        done = sent["execution"]
        assert done["status"] == "success" and done["response"] and done["sources"]["response"] == "screen", done


def test_the_answer_is_read_off_the_screen_where_no_log_is_kept(muxd_server):
    asyncio.run(_screen_answer(muxd_server))


async def _slow_to_take_the_prompt(server: MuxdTestServer) -> None:
    from muxd.executions.answers import normalise_answer
    from muxd.testing.fake_agent_panes import FAKE_AGENT, agent_state
    from muxd.testing.fake_agents.codex import ANSWER
    from muxd.testing.wait import wait_until

    pane = server.cli("new-session", "-d", "-P", "-s", "slow", "--name", "slow", "-e", "FAKE_AGENT_INPUT_DELAY_S=4",
                      "--", *FAKE_AGENT, "codex", check=True).stdout.strip()
    wait_until(lambda: agent_state(server, pane) == "Idle", timeout=20, message="slow codex idle")
    async with mcp_session(server) as session:
        sent = await call_ok(session, "send_task", pane_id="slow", message="take your time", wait=True,
                             wait_timeout_s=30)
        done = sent["execution"]
        # Idle for longer than a turn too short to be seen busy, but its echo was not on the
        # screen yet: the turn had not happened, so it was not over.
        assert done["status"] == "success" and done["duration_seconds"] > 4, done
        assert done["response"] == normalise_answer(ANSWER), done


def test_an_agent_slow_to_take_the_prompt_is_waited_for(muxd_server):
    asyncio.run(_slow_to_take_the_prompt(muxd_server))


async def _enter_taken_as_typing(server: MuxdTestServer) -> None:
    from muxd.testing.fake_agent_panes import FAKE_AGENT, agent_state
    from muxd.testing.wait import wait_until

    for name, swallowed in (("once", 1), ("always", 99)):
        pane = server.cli("new-session", "-d", "-P", "-s", name, "--name", name, "-e",
                          f"FAKE_AGENT_SWALLOW_ENTERS={swallowed}", "--", *FAKE_AGENT, "aider", check=True).stdout.strip()
        wait_until(lambda: agent_state(server, pane) == "Idle", timeout=20, message=f"{name} idle")
    async with mcp_session(server) as session:
        # The agent took the first Enter as part of the typing: the prompt sat in its input box.
        # muxd presses Enter again and the turn runs (it ended `success` with no answer).
        once = (await call_ok(session, "send_task", pane_id="once", message="please answer", wait=True,
                              wait_timeout_s=40))["execution"]
        assert once["status"] == "success" and once["response"], once
        # One that never takes it: failed as never taken, not a success with no turn behind it.
        never = (await call_ok(session, "send_task", pane_id="always", message="please answer", wait=True,
                               wait_timeout_s=40))["execution"]
        assert never["status"] == "failed" and never["error"]["type"] == "prompt_not_taken", never
        assert "never submitted" in never["error"]["message"]


def test_a_prompt_left_in_the_input_box_is_sent_again_or_fails_as_never_taken(muxd_server):
    asyncio.run(_enter_taken_as_typing(muxd_server))
