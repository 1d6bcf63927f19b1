"""tools/list made lean (issue 27, item 9): the published schemas accept exactly what the SDK's
own would, carry no derived titles, and `muxd mcp --tools CATEGORIES` serves fewer tools, through
the real SDK client; agent_summary leaves out what has nothing to say. Tokens are bytes / 4 of the
compact JSON (schema_lean.tokens_of); benchmarks/bench_tools_list.py prints the figures."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from jsonschema import Draft202012Validator
from mcp_types import ToolAnnotations

from muxd.mcp_server.limits import GuardLimits
from muxd.mcp_server.schema_lean import lean_annotations, lean_input_schema, lean_output_schema, tokens_of
from muxd.mcp_server.server import build_registry
from muxd.mcp_server.tool_categories import CATEGORIES, CATEGORY_META_KEY
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_http import stdio_session
from muxd.testing.mcp_stdio import call_ok, call_refused, mcp_session, result_text
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import MuxdTestServer

TOOLS_LIST_SMALL_TOKENS = 4000  # an orchestrator that only watches agents: summary and panes
SUMMARY_TYPICAL_TOKENS = 85     # seed 002's ~80 tokens
# Values of every JSON type and at the edges of muxd's bounds, tried on every argument.
SAMPLES: list[Any] = [None, "", "x", "x" * 300, 0, 1, -1, 0.05, 0.5, 1.5, 50, 51, 168, 169, 10**7, True,
                      [], ["a"], ["a"] * 30, [1], {}, {"k": "v"}, {"kind": "none"}, {"kind": "none", "bogus": 1},
                      "Idle", "all", "approve", "json", "safe"]


def _raw_schemas() -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """(name, the SDK's own input schema, its own output schema) of every tool, before publication."""
    registry = build_registry(None, GuardLimits())
    tools = registry.server._tool_manager.list_tools()  # noqa: SLF001 - the SDK's own derivation, for comparison
    out = []
    for tool in tools:
        arguments = tool.fn_metadata.arg_model  # the strict model: its schema with extras forbidden
        output = tool.fn_metadata.output_model
        raw_output = None
        if output is not None:
            from pydantic import TypeAdapter
            raw_output = TypeAdapter(output).json_schema()
        out.append((tool.name, arguments.model_json_schema(by_alias=True), raw_output))
    return out


def _uses(schema: Any, keyword: str) -> int:
    """How often `keyword` is used as a keyword in `schema` (a property of that name is not)."""
    if isinstance(schema, list):
        return sum(_uses(v, keyword) for v in schema)
    if not isinstance(schema, dict):
        return 0
    here = int(keyword in schema)
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            here += sum(_uses(v, keyword) for v in value.values())
        elif key not in ("enum", "required", "default", "const"):
            here += _uses(value, keyword)
    return here


def test_lean_schemas_accept_exactly_what_the_sdk_schemas_accept() -> None:
    tried = 0
    for name, raw, raw_output in _raw_schemas():
        lean = lean_input_schema(raw)
        assert _uses(lean, "title") == 0 and _uses(raw, "title") > 0, name
        assert len(json.dumps(lean)) < len(json.dumps(raw)), name
        full, short = Draft202012Validator(raw), Draft202012Validator(lean)
        properties = list(raw["properties"])
        required = {p: "x" for p in raw.get("required", [])}
        for prop, value in itertools.product(properties, SAMPLES):
            arguments = {**required, prop: value}
            assert full.is_valid(arguments) == short.is_valid(arguments), (name, prop, value)
            tried += 1
        assert full.is_valid({**required, "no_such_argument": 1}) is False
        assert short.is_valid({**required, "no_such_argument": 1}) is False
        if raw_output is not None:
            lean_out = lean_output_schema(raw_output)
            assert _uses(lean_out, "title") == _uses(lean_out, "description") == 0, name
            assert Draft202012Validator(lean_out).is_valid({}) == Draft202012Validator(raw_output).is_valid({})
    assert tried > 1000


def test_lean_annotations_keep_every_hint_the_defaults_do_not_give() -> None:
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)
    kill = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                            open_world_hint=False)
    dump = lambda a: a.model_dump(by_alias=True, exclude_none=True)  # noqa: E731
    assert dump(lean_annotations(read_only)) == {"readOnlyHint": True, "openWorldHint": False}
    assert dump(lean_annotations(kill)) == {"destructiveHint": True, "idempotentHint": True, "openWorldHint": False}
    assert dump(lean_annotations(write)) == {"destructiveHint": False, "openWorldHint": False}


async def _selected(server: MuxdTestServer) -> None:
    async with mcp_session(server) as everything:
        full = await everything.list_tools()
    async with stdio_session(server, "--tools", "summary, panes") as session:
        listed = await session.list_tools()
        categories = {t.meta[CATEGORY_META_KEY] for t in listed.tools if t.meta}
        assert categories == {"summary", "panes"} and len(listed.tools) == 9
        small = tokens_of(listed.model_dump(by_alias=True, mode="json", exclude_none=True))
        assert small <= TOOLS_LIST_SMALL_TOKENS, small
        assert small < tokens_of(full.model_dump(by_alias=True, mode="json", exclude_none=True)) / 2
        refused = await call_refused(session, "list_tools")  # engine was not asked for
        assert refused.message.startswith("not_found: no tool named 'list_tools'"), refused.message
    assert {t.meta[CATEGORY_META_KEY] for t in full.tools if t.meta} == set(CATEGORIES)
    out = server.cli("mcp", "--tools", "summary,history", input="")
    assert out.returncode == 1 and "unknown category 'history'" in out.stderr, out.stderr
    assert all(name in out.stderr for name in CATEGORIES)


def test_mcp_tools_option_serves_only_those_categories(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_selected(muxd_server), timeout=40))


async def _lean_summary(server: MuxdTestServer) -> None:
    start_fake_agent(server, "worker")
    async with mcp_session(server) as session:
        result = await session.call_tool("agent_summary", {"pane_id": "worker"})
        summary = result.structured_content
        assert summary["activity"]["state"] == "Idle"
        # Nothing asked, no error, no limit, no tool in use, nothing in the background, all read off the
        # screen: left out.
        assert not {"confirmation", "error", "limit", "background", "sources", "confidence"} & set(summary)
        assert not {"tool", "tool_input"} & set(summary["activity"])
        assert summary["session"]["tokens_used"] is None and summary["recent_tools"] == []  # seed 002's own: kept
        assert len(result_text(result)) / 4 <= SUMMARY_TYPICAL_TOKENS, result_text(result)
        listed = await call_ok(session, "list_tools", category="summary", include_schema=True)
        assert [t["name"] for t in listed["tools"]] == ["agent_summary", "list_agents"]
        assert listed["tools"][0]["inputSchema"]["properties"]["output_lines"]["maximum"] == 50
        assert "inputSchema" not in (await call_ok(session, "list_tools", category="summary"))["tools"][0]


def test_typical_agent_summary_stays_under_85_tokens(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_lean_summary(muxd_server), timeout=40))
