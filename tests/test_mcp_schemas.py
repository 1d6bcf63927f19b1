"""Every MCP tool's schemas, through the real SDK client against a real daemon (issue 27, items 7
and 8): bounds are declared (minimum/maximum), unknown arguments are refused with muxd's one-line
`bad_request: field: why`, every tool publishes a real outputSchema, and real results match it."""

from __future__ import annotations

import asyncio
from typing import Any

from jsonschema import Draft202012Validator
from mcp import ClientSession

from muxd.config import (
    AUDIT_HISTORY_LIMIT_MAX, EXECUTION_TIMEOUT_MAX_S, EXECUTION_WAIT_MAX_S, KNOWLEDGE_SEARCH_LIMIT_MAX, MAX_COLUMNS,
    MAX_LINES, MIN_COLUMNS, MIN_LINES, TASK_LEASE_MAX_S, TASK_LEASE_MIN_S, TASK_LIST_LIMIT_MAX, TASK_NEXT_LIMIT_MAX,
    TASK_PRIORITY_MAX,
)
from muxd.mcp_server.limits import WAIT_TIMEOUT_S_MAX, WAIT_TIMEOUT_S_MIN
from muxd.mcp_server.tool_categories import CATEGORIES, CATEGORY_META_KEY
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_stdio import call_error, mcp_session, result_text, wait_budget_s
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer

# h1's execution and seed-003 tools are listed too: none may publish the SDK's placeholder.
EXECUTION_TOOLS = {"send_task", "cancel_execution", "list_active_executions", "list_recent_executions",
                   "get_execution_result", "get_agent_activity_summary", "tasks_list", "tasks_by_trace",
                   "tasks_last_failed"}
ALL_TOOLS = EXECUTION_TOOLS | {
    "agent_summary", "list_agents", "list_panes", "create_pane", "send_input", "read_pane", "resize_pane",
    "kill_pane", "wait_for", "list_tools", "get_tool_metrics", "get_tool_history", "get_next_actionable",
    "claim_task", "update_task_status", "complete_task", "create_task", "list_tasks", "get_task", "review_task",
    "search_knowledge", "dispatch_tasks"}
# (tool, argument) -> (minimum, maximum), as the schema must say them.
BOUNDS: dict[tuple[str, str], tuple[float, float]] = {
    ("agent_summary", "output_lines"): (1, 50),
    ("read_pane", "lines"): (1, 1000),
    ("create_pane", "columns"): (MIN_COLUMNS, MAX_COLUMNS), ("create_pane", "lines"): (MIN_LINES, MAX_LINES),
    ("resize_pane", "columns"): (MIN_COLUMNS, MAX_COLUMNS), ("resize_pane", "lines"): (MIN_LINES, MAX_LINES),
    ("wait_for", "timeout_s"): (WAIT_TIMEOUT_S_MIN, WAIT_TIMEOUT_S_MAX),
    ("get_tool_history", "limit"): (1, AUDIT_HISTORY_LIMIT_MAX),
    ("send_task", "attempt"): (1, 1000), ("send_task", "timeout_s"): (1, EXECUTION_TIMEOUT_MAX_S),
    ("send_task", "wait_timeout_s"): (WAIT_TIMEOUT_S_MIN, EXECUTION_WAIT_MAX_S),
    ("list_recent_executions", "hours"): (1, 168), ("list_recent_executions", "limit"): (1, 100),
    ("get_agent_activity_summary", "hours"): (1, 168),
    ("tasks_list", "limit"): (1, 100), ("tasks_list", "offset"): (0, 1_000_000), ("tasks_last_failed", "limit"): (1, 50),
    ("get_next_actionable", "limit"): (1, TASK_NEXT_LIMIT_MAX),
    ("get_next_actionable", "priorityLte"): (0, TASK_PRIORITY_MAX),
    ("claim_task", "leaseSec"): (TASK_LEASE_MIN_S, TASK_LEASE_MAX_S), ("create_task", "priority"): (0, TASK_PRIORITY_MAX),
    ("list_tasks", "limit"): (1, TASK_LIST_LIMIT_MAX), ("list_tasks", "offset"): (0, 1_000_000),
    ("search_knowledge", "limit"): (1, KNOWLEDGE_SEARCH_LIMIT_MAX), ("search_knowledge", "minScore"): (0, 1),
}


def _keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in a schema (names of properties are not keywords)."""
    if isinstance(schema, list):
        return set().union(*map(_keywords, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            found |= set().union(*map(_keywords, value.values())) if value else set()
        elif key not in ("enum", "required", "default", "const"):
            found |= _keywords(value)
    return found


class Checked:
    """Calls through the SDK client whose structured results must match the tool's outputSchema."""

    def __init__(self, session: ClientSession, output_schemas: dict[str, dict[str, Any]]) -> None:
        self.session = session
        self.validators = {name: Draft202012Validator(s) for name, s in output_schemas.items()}
        self.checked: set[str] = set()

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool(tool, arguments)
        assert not result.is_error, f"{tool} failed: {result_text(result)}"
        structured: dict[str, Any] = result.structured_content
        errors = [e.message for e in self.validators[tool].iter_errors(structured)]
        assert not errors, f"{tool}'s result does not match its outputSchema: {errors}"
        self.checked.add(tool)
        return structured


async def _published(server: MuxdTestServer) -> None:
    async with mcp_session(server) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == ALL_TOOLS
        for name, tool in tools.items():
            inputs, output = tool.input_schema, tool.output_schema
            assert inputs["additionalProperties"] is False, name  # unknown arguments are refused
            assert output is not None and output.get("properties"), f"{name} publishes a placeholder outputSchema"
            assert "title" not in _keywords(inputs) | _keywords(output), name
            assert (tool.meta or {}).get(CATEGORY_META_KEY) in CATEGORIES, name
            assert tool.description and tool.annotations is not None, name
            for argument, spec in inputs["properties"].items():
                if spec.get("type") == "integer" or "integer" in (spec.get("type") or []):
                    assert "minimum" in spec and "maximum" in spec, f"{name}.{argument} states no bounds"
        for (name, argument), (low, high) in BOUNDS.items():
            spec = tools[name].input_schema["properties"][argument]
            assert (spec["minimum"], spec["maximum"]) == (low, high), (name, argument, spec)
        for name in ("list_recent_executions", "get_agent_activity_summary"):
            assert "number" in tools[name].input_schema["properties"]["hours"]["type"]  # seed 000: a number
        assert tools["send_task"].input_schema["properties"]["wait_timeout_s"]["type"] == "number"


def test_every_tool_publishes_bounds_strict_inputs_and_an_output_schema(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_published(muxd_server), timeout=30))


async def _refusals(server: MuxdTestServer) -> None:
    start_fake_agent(server, "worker")
    async with mcp_session(server) as session:
        refused = {
            ("get_tool_history", "offset"): {"limit": 3, "offset": 2},  # a client that thinks it pages
            ("read_pane", "lines"): {"pane_id": "worker", "lines": 0},
            ("list_recent_executions", "hours"): {"hours": 0.5},
            ("list_recent_executions", "limit"): {"limit": 101},
            ("list_tasks", "limit"): {"limit": TASK_LIST_LIMIT_MAX + 1},
            ("claim_task", "leaseSec"): {"taskId": "t", "leaseSec": TASK_LEASE_MIN_S - 1},
            ("create_task", "verification.bogus"): {"title": "t", "verification": {"kind": "none", "bogus": 1}},
            ("send_task", "wait_timeout_s"): {"pane_id": "worker", "message": "hi", "wait": True,
                                             "wait_timeout_s": 0.01},
            ("agent_summary", "colour"): {"pane_id": "worker", "colour": True},
        }
        for (tool, field), arguments in refused.items():
            message = await call_error(session, tool, **arguments)
            assert message.startswith(f"bad_request: {field}: "), (tool, message)
            assert "\n" not in message and "[type=" not in message, message
        assert "Extra inputs" in await call_error(session, "list_panes", all=True)

        # Fractions where the seeds give numbers: 1.5 hours; a half-second wait is waited, not "got 0".
        recent = await session.call_tool("list_recent_executions", {"hours": 1.5})
        assert not recent.is_error and recent.structured_content["filters_applied"]["hours"] == 1.5
        sent = await session.call_tool("send_task", {"pane_id": "worker", "message": "hello", "wait": True,
                                                     "wait_timeout_s": 0.5})
        assert not sent.is_error, result_text(sent)
        assert sent.structured_content["execution_id"].startswith("exec_")


def test_out_of_range_and_unknown_arguments_are_bad_requests(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_refusals(muxd_server), timeout=60))


async def _results_match(server: MuxdTestServer) -> None:
    start_fake_agent(server, "worker")
    async with mcp_session(server) as session:
        tools = (await session.list_tools()).tools
        call = Checked(session, {t.name: t.output_schema or {} for t in tools})
        shell = await call.ok("create_pane", command=["sh", "-c", "echo ready; exec sleep 60"], name="sh")
        await call.ok("list_panes")
        await call.ok("list_agents")
        await call.ok("agent_summary", pane_id="worker")
        await call.ok("agent_summary", pane_id="worker", include_recent_output=True, output_lines=3)
        await call.ok("wait_for", pane_id="worker", state="Idle", timeout_s=wait_budget_s(10))
        await call.ok("wait_for", pane_id=["worker", "sh"], pattern="ready|Claude", mode="any",
                      timeout_s=wait_budget_s(10))
        await call.ok("read_pane", pane_id="sh", lines=5)
        await call.ok("send_input", pane_id="sh", text="x")
        await call.ok("resize_pane", pane_id="sh", columns=90, lines=20)
        listed = await call.ok("list_tools", include_schema=True, category="panes")
        assert all(t["inputSchema"]["type"] == "object" for t in listed["tools"])
        await call.ok("list_tools", search="task")
        await call.ok("get_tool_metrics")
        await call.ok("get_tool_metrics", format="prometheus")
        await call.ok("get_tool_history", limit=5)
        task = await call.ok("create_task", title="Check the schemas", priority=5)
        await call.ok("get_next_actionable")
        await call.ok("list_tasks", state=["ready"])
        await call.ok("claim_task", taskId=task["taskId"])
        await call.ok("update_task_status", taskId=task["taskId"], status="in_progress", context={"step": 1})
        await call.ok("complete_task", taskId=task["taskId"], learnings=[{"content": "schemas match"}])
        await call.ok("get_task", taskId=task["taskId"])
        await call.ok("search_knowledge", query="schemas")
        await call.ok("list_recent_executions")
        await call.ok("list_active_executions")
        await call.ok("get_agent_activity_summary")
        await call.ok("tasks_list")
        await call.ok("tasks_by_trace", trace_id="no-such-trace")
        await call.ok("tasks_last_failed")
        await call.ok("kill_pane", pane_id=shell["id"])
        assert len(call.checked) == 26, sorted(call.checked)


def test_structured_results_match_their_output_schema(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_results_match(muxd_server), timeout=90))
