"""The execution tools and seed 003's task tools publish a real `outputSchema` and every result's
`structuredContent` validates against it (issue 27, item 8); seed 003's tools give up on a daemon
that does not answer within 2 s with a typed error (item 5). A real daemon, fake agent CLIs in
real panes, `muxd mcp` over stdio through the real MCP SDK client."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import jsonschema

from muxd.mcp_server.task_history_tools import UPSTREAM_TIMEOUT_S
from muxd.testing.fake_agent_panes import start_fake_agent as start_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session, result_text
from muxd.testing.server import MuxdTestServer

TURN_WAIT_S = 25
# The tool -> keys its output schema must require (the shapes of execution_schemas.py).
TOOLS = {
    "send_task": {"execution_id", "status", "created"},
    "cancel_execution": {"execution_id", "status", "cancelled"},
    "list_active_executions": {"executions", "count"},
    "list_recent_executions": {"executions", "total_count", "filters_applied"},
    "get_execution_result": {"execution"},
    "get_agent_activity_summary": {"commands", "recent_failures"},
    "tasks_list": {"executions", "total", "has_more"},
    "tasks_by_trace": {"executions", "retry_count", "final_status"},
    "tasks_last_failed": {"failures", "error_patterns"},
}


class Checked:
    """Calls tools through a session and validates each structured result against its tool's schema."""

    def __init__(self, session: Any, schemas: dict[str, dict[str, Any]]) -> None:
        self.session, self.schemas, self.called = session, schemas, set()

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool(tool, arguments)
        assert not result.is_error, f"{tool}: {result_text(result)}"
        jsonschema.validate(result.structured_content, self.schemas[tool])
        self.called.add(tool)
        return result.structured_content


async def _typed(server: MuxdTestServer) -> None:
    start_agent(server, "typed")
    async with mcp_session(server) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        schemas = {}
        for tool, required in TOOLS.items():
            schema = listed[tool].output_schema
            assert schema and schema.get("type") == "object", tool
            jsonschema.Draft202012Validator.check_schema(schema)
            assert required <= set(schema.get("required", ())), (tool, schema.get("required"))
            assert "result" not in schema["properties"], tool  # the SDK's wrapper of an untyped return
            schemas[tool] = schema
        call = Checked(session, schemas)
        done = await call("send_task", pane_id="typed", message="first", task_id="t-1", trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
                          attempt=1, wait=True, wait_timeout_s=TURN_WAIT_S)
        assert done["execution"]["status"] == "success" and done["execution"]["principal"] == "system"
        held = await call("send_task", pane_id="typed", message="tool", trace_id="4bf92f3577b34da6a3ce929d0e0e4736", attempt=2)
        queued = await call("send_task", pane_id="typed", message="queued")
        active = await call("list_active_executions")
        assert {e["id"] for e in active["executions"]} == {held["execution_id"], queued["execution_id"]}
        await call("cancel_execution", execution_id=queued["execution_id"])
        await call("cancel_execution", execution_id=held["execution_id"])
        failing = (await call_ok(session, "create_pane", command=["sh", "-c", "exit 4"]))["execution_id"]
        await call_ok(session, "wait_for", execution_id=failing, timeout_s=TURN_WAIT_S)
        await call("list_recent_executions")
        await call("list_recent_executions", status="failed")
        result = await call("get_execution_result", agent_name="typed", execution_id=done["execution_id"],
                            include_transcript=True)
        assert result["execution"]["transcript"]
        fleet = await call("get_agent_activity_summary")
        assert {"fleet_summary", "by_agent"} <= set(fleet)
        one = await call("get_agent_activity_summary", agent_name="typed")
        assert {"agent_name", "summary"} <= set(one)
        await call("tasks_list", limit=2)
        trace = await call("tasks_by_trace", trace_id="4bf92f3577b34da6a3ce929d0e0e4736")
        assert trace["retry_count"] == 1
        failures = await call("tasks_last_failed", unique_errors=True)
        assert failures["failures"] and failures["error_patterns"]
        assert call.called == set(TOOLS)


def test_each_history_tool_publishes_its_output_schema_and_keeps_to_it(muxd_server):
    asyncio.run(_typed(muxd_server))


async def _stalled(server: MuxdTestServer) -> None:
    assert server.pid is not None
    async with mcp_session(server) as session:
        await call_ok(session, "tasks_list")  # connected and answering
        os.kill(server.pid, signal.SIGSTOP)  # the daemon stops answering, its socket stays open
        try:
            for tool, arguments in (("tasks_list", {}), ("tasks_by_trace", {"trace_id": "t"}),
                                    ("tasks_last_failed", {})):
                text = await call_error(session, tool, **arguments)
                assert text.startswith("timeout: ") and f"within {UPSTREAM_TIMEOUT_S:g} s" in text, text
                assert "\n" not in text
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert (await call_ok(session, "tasks_list"))["total"] == 0  # and serves again


def test_seed_003_tools_give_up_on_a_daemon_that_does_not_answer(muxd_server):
    asyncio.run(_stalled(muxd_server))
