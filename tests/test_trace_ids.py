"""W3C trace context for executions: trace and span ids checked where executions are submitted
(the daemon, whatever the client), declared in send_task's schema, and handed to the program of
a traced command's pane as TRACEPARENT (with or without an OTLP export configured)."""

from __future__ import annotations

import asyncio
import json

import pytest

from muxd.errors import BadRequest
from muxd.telemetry.trace_ids import (
    SPAN_ID_PATTERN, TRACE_ID_PATTERN, query_trace_id, span_id_of, task_trace_id, trace_context, trace_id_of,
    traceparent,
)
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_stdio import call_error, call_ok, mcp_session
from muxd.testing.server import MuxdTestServer

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
UUID = "550e8400-e29b-41d4-a716-446655440000"


@pytest.mark.parametrize("value", [TRACE, "f" * 32, "0" * 31 + "1"])
def test_w3c_trace_ids_are_taken_as_they_are(value):
    assert trace_id_of(value) == value


def test_a_uuid_is_a_trace_id_of_its_32_digits():
    assert trace_id_of(UUID) == "550e8400e29b41d4a716446655440000"
    assert task_trace_id(UUID) == trace_id_of(UUID) and task_trace_id("task-7") is None


@pytest.mark.parametrize("value, says", [
    ("tr-1", "32 lowercase hex digits"), (TRACE.upper(), "32 lowercase hex digits"), (TRACE[:-1], "32 lowercase"),
    (TRACE + "0", "32 lowercase"), ("0" * 32, "must not be all zeros"), ("00000000-0000-0000-0000-000000000000", "zeros"),
    (UUID.upper(), "32 lowercase"), (" " + TRACE, "32 lowercase"),
])
def test_anything_else_is_refused_naming_the_field(value, says):
    with pytest.raises(BadRequest) as refused:
        trace_id_of(value)
    assert refused.value.detail["field"] == "trace_id" and says in refused.value.message
    assert "\n" not in refused.value.message


@pytest.mark.parametrize("value", ["s1", SPAN.upper(), SPAN + "0", "0" * 16, TRACE])
def test_span_ids_are_16_lowercase_hex_digits_not_all_zero(value):
    assert span_id_of(SPAN) == SPAN
    with pytest.raises(BadRequest) as refused:
        span_id_of(value)
    assert refused.value.detail["field"] == "span_id"


def test_the_trace_context_an_execution_is_recorded_with():
    assert trace_context(None, None) == (None, None)
    assert trace_context(TRACE, SPAN) == (TRACE, SPAN)
    trace, span = trace_context(UUID, None)
    assert trace == UUID.replace("-", "") and span_id_of(span) == span  # a span of its own, new
    assert trace_context(TRACE, None)[1] != span
    with pytest.raises(BadRequest, match="span_id needs a trace_id"):
        trace_context(None, SPAN)
    assert traceparent(TRACE, SPAN) == f"00-{TRACE}-{SPAN}-01"


def test_lookups_by_trace_take_the_uuid_spelling_and_old_ids_as_they_are():
    assert query_trace_id(UUID) == UUID.replace("-", "") and query_trace_id(TRACE) == TRACE
    assert query_trace_id("tr-9") == "tr-9" and query_trace_id(None) is None  # rows from before the check


def _refusal(server: MuxdTestServer, *args: str) -> str:
    out = server.cli(*args)
    assert out.returncode == 1 and out.stdout == "", (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


def test_the_daemon_refuses_ids_that_are_not_w3c_and_keeps_serving(muxd_server, tmp_path):
    s = muxd_server
    start_fake_agent(s, "worker")
    assert "trace_id must be a W3C trace id" in _refusal(s, "submit", "-t", "worker", "go", "--trace-id", "feat-7")
    assert "span_id must be a W3C span id" in _refusal(s, "submit", "-t", "worker", "go", "--trace-id", TRACE,
                                                       "--span-id", "s1")
    assert "trace_id must not be all zeros" in _refusal(s, "run", "--trace-id", "0" * 32, "--", "true")
    assert "span_id needs a trace_id" in _refusal(s, "run", "--span-id", SPAN, "--", "true")
    listed = json.loads(s.cli("history", "--json", check=True).stdout)
    assert listed["total"] == 0  # nothing refused was run

    # A command traced by its trace id alone: a span id of its own, in its record and its pane.
    seen = tmp_path / "traceparent"
    ran = json.loads(s.cli("run", "--wait", "--json", "--trace-id", TRACE, "--", "sh", "-c",
                           f'printf %s "$TRACEPARENT" > {seen}', check=True).stdout)
    assert ran["status"] == "success" and ran["trace_id"] == TRACE and span_id_of(ran["span_id"])
    assert seen.read_text() == f"00-{TRACE}-{ran['span_id']}-01"
    plain = json.loads(s.cli("run", "--wait", "--json", "--", "sh", "-c", 'test -z "$TRACEPARENT"', check=True).stdout)
    assert plain["status"] == "success" and plain["trace_id"] is plain["span_id"] is None


async def _send_task_schema_and_refusals(server: MuxdTestServer) -> None:
    start_fake_agent(server, "worker")
    async with mcp_session(server) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        properties = tools["send_task"].input_schema["properties"]
        for name, pattern in (("trace_id", TRACE_ID_PATTERN), ("span_id", SPAN_ID_PATTERN)):
            # published lean: an optional string is {"type": ["string", "null"], "pattern": …}
            assert properties[name]["pattern"] == pattern and "string" in properties[name]["type"], properties[name]
        refused = await call_error(session, "send_task", pane_id="worker", message="go", trace_id="tr-1")
        assert "trace_id" in refused and "pattern" in refused, refused
        refused = await call_error(session, "send_task", pane_id="worker", message="go", trace_id=TRACE, span_id="s1")
        assert "span_id" in refused, refused
        # What the pattern cannot say, the daemon does.
        zeros = await call_error(session, "send_task", pane_id="worker", message="go", trace_id="0" * 32)
        assert "bad_request" in zeros and "trace_id must not be all zeros" in zeros, zeros
        sent = await call_ok(session, "send_task", pane_id="worker", message="go", trace_id=UUID, wait=True,
                             wait_timeout_s=20)
        assert sent["execution"]["status"] == "success"
        assert sent["execution"]["trace_id"] == UUID.replace("-", "") and span_id_of(sent["execution"]["span_id"])
        found = await call_ok(session, "tasks_by_trace", trace_id=UUID)
        assert [e["id"] for e in found["executions"]] == [sent["execution_id"]]


def test_send_task_declares_the_patterns_and_refuses_other_ids(muxd_server):
    asyncio.run(_send_task_schema_and_refusals(muxd_server))
