"""Executions and task checks as OpenTelemetry spans, end to end: a real daemon configured with
the standard OTEL_EXPORTER_OTLP_ENDPOINT sends them over OTLP/HTTP to a receiver of the test's
own, which decodes each POST /v1/traces as the protocol's ExportTraceServiceRequest. Real
commands (`muxd run`), a fake agent CLI's turns, and the task queue's dispatcher and checks."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from muxd.executions.record import Execution
from muxd.telemetry.export import SpanExport
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
TASK_UUID_TRACE = "550e8400-e29b-41d4-a716-446655440000"  # seed 003's own example of a trace id
NS_PER_S = 1_000_000_000
SPAN_WAIT_S = 30


class OtlpReceiver:
    """An OTLP/HTTP trace receiver on a free local port: every span it was sent, decoded."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.take(self.path, self.headers.get("Content-Type", ""), request)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self, path: str, content_type: str, request: ExportTraceServiceRequest) -> None:
        assert content_type == "application/x-protobuf", content_type
        rows = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    rows.append({
                        "name": span.name, "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex() or None, "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano, "status": span.status.code, "message": span.status.message,
                        "attributes": {a.key: _value(a.value) for a in span.attributes},
                        "events": [e.name for e in span.events], "resource": resource,
                        "scope": scope_spans.scope.name})
        with self._lock:
            self.paths.append(path)
            self.spans.extend(rows)

    def span_of(self, execution_id: str) -> dict[str, Any] | None:
        with self._lock:
            return next((s for s in self.spans if s["attributes"].get("muxd.execution.id") == execution_id
                         and s["name"] != "verify_task"), None)

    def named(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [s for s in self.spans if s["name"] == name]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(value: Any) -> Any:
    return getattr(value, value.WhichOneof("value"))


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    r = OtlpReceiver()
    yield r
    r.close()


@pytest.fixture
def traced_server(receiver: OtlpReceiver) -> Iterator[MuxdTestServer]:
    """A daemon exporting to `receiver`, its batches sent every 50 ms (the SDK's own variable).
    It was started under a TRACEPARENT of its own, which no pane may inherit."""
    server = MuxdTestServer(env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50",
                                 "OTEL_SERVICE_NAME": "muxd-under-test",
                                 "TRACEPARENT": f"00-{'a' * 32}-{'b' * 16}-01"}).start()
    try:
        yield server
    finally:
        server.stop()


def run_json(server: MuxdTestServer, *args: str) -> dict[str, Any]:
    return json.loads(server.cli("run", "--wait", "--json", *args).stdout)


def test_commands_and_turns_are_spans_with_their_ids_times_and_outcome(traced_server, receiver, tmp_path):
    s = traced_server
    seen = tmp_path / "traceparent"
    traced = run_json(s, "--trace-id", TRACE, "--span-id", SPAN, "--", "sh", "-c", f'printf %s "$TRACEPARENT" > {seen}')
    assert traced["status"] == "success" and (traced["trace_id"], traced["span_id"]) == (TRACE, SPAN)
    assert seen.read_text() == f"00-{TRACE}-{SPAN}-01"  # the pane's own trace context, not the daemon's
    span = wait_until(lambda: receiver.span_of(traced["id"]), timeout=SPAN_WAIT_S, message="the command's span")
    assert receiver.paths[0] == "/v1/traces"
    assert (span["trace_id"], span["span_id"], span["parent_span_id"]) == (TRACE, SPAN, None)
    assert span["name"] == "command sh" and span["status"] == Status.STATUS_CODE_UNSET
    # From its start to its end, as the record says (to the microsecond: floats of epoch seconds).
    assert traced["queued_at"] is None  # a new window's program starts as it is asked for
    assert span["start"] == pytest.approx(traced["started_at"] * NS_PER_S, abs=1_000)
    assert span["end"] == pytest.approx(traced["completed_at"] * NS_PER_S, abs=1_000)
    attributes = span["attributes"]
    assert attributes["process.exit.code"] == 0 and attributes["muxd.execution.status"] == "success"
    assert attributes["muxd.execution.kind"] == "command" and attributes["muxd.pane.id"] == traced["pane_id"]
    assert attributes["muxd.execution.triggered_by"] == "cli"
    assert span["resource"]["service.name"] == "muxd-under-test" and span["scope"] == "muxd"

    # Untraced and failing: ids of its own, status ERROR, the error's type; no TRACEPARENT at all.
    failed = run_json(s, "--", "sh", "-c", 'test -z "$TRACEPARENT" || exit 9; exit 3')
    assert failed["status"] == "failed" and failed["exit_code"] == 3 and failed["trace_id"] is None
    span = wait_until(lambda: receiver.span_of(failed["id"]), timeout=SPAN_WAIT_S, message="the failed command's span")
    assert span["status"] == Status.STATUS_CODE_ERROR and span["message"] == failed["error"]["message"]
    assert len(span["trace_id"]) == 32 and span["trace_id"] != "0" * 32 and span["trace_id"] != TRACE
    assert span["attributes"]["process.exit.code"] == 3 and span["attributes"]["error.type"] == "exit_status"

    # An agent's turn: gen_ai's names; a UUID trace id is the same 32 digits everywhere.
    start_fake_agent(s, "worker")
    turn = json.loads(s.cli("submit", "-t", "worker", "add a flag", "--wait", "--json", "--trace-id",
                            TASK_UUID_TRACE, "--task-id", "flag-1", "--attempt", "2", check=True).stdout)
    uuid_hex = TASK_UUID_TRACE.replace("-", "")
    assert turn["status"] == "success" and turn["trace_id"] == uuid_hex and len(turn["span_id"]) == 16
    listed = json.loads(s.cli("history", "--trace", TASK_UUID_TRACE, "--json", check=True).stdout)
    assert [e["id"] for e in listed["executions"]] == [turn["id"]]
    span = wait_until(lambda: receiver.span_of(turn["id"]), timeout=SPAN_WAIT_S, message="the turn's span")
    assert (span["trace_id"], span["span_id"]) == (uuid_hex, turn["span_id"])
    assert span["name"] == "invoke_agent worker" and span["status"] == Status.STATUS_CODE_UNSET
    attributes = span["attributes"]
    assert attributes["gen_ai.operation.name"] == "invoke_agent" and attributes["gen_ai.agent.name"] == "worker"
    assert attributes["gen_ai.provider.name"] == "anthropic" and attributes["muxd.agent.type"] == "claude"
    assert attributes["muxd.execution.tokens"] == turn["tokens_used"] > 0
    assert (attributes["muxd.task.id"], attributes["muxd.execution.attempt"]) == ("flag-1", 2)
    assert "process.exit.code" not in attributes
    assert span["start"] == pytest.approx(turn["queued_at"] * NS_PER_S, abs=1_000)  # from its submission


def test_a_tasks_turns_and_checks_are_one_trace(traced_server, receiver, tmp_path):
    """A task's trace is its uuid: the dispatcher's turns are in it, each check is a span of it,
    and the check's command that span's child, its pane told so by TRACEPARENT."""
    s = traced_server
    pane = start_fake_agent(s, "worker")
    check = (f'printf "%s\\n" "$TRACEPARENT" >> {tmp_path}/seen; '
             f"if [ -f {tmp_path}/passed ]; then echo ok; else touch {tmp_path}/passed; echo 'E501'; exit 1; fi")
    s.cli("task", "add", "checked module", "--verify-cmd", check, check=True)
    s.cli("task", "run", "-t", pane, check=True)
    task = wait_until(lambda: (t := _task(s, "checked module"))["state"] == "done" and t, timeout=90,
                      message="the task done")
    trace = task["id"].replace("-", "")
    shown = json.loads(s.cli("task", "show", task["id"], "--json", check=True).stdout)
    checks = sorted((e for e in shown["executions"] if e["kind"] == "command"), key=lambda e: e["started_at"])
    prompts = [e for e in shown["executions"] if e["kind"] == "prompt"]
    assert [e["status"] for e in checks] == ["failed", "success"] and len(prompts) == 2
    assert {e["trace_id"] for e in checks + prompts} == {trace}
    assert (tmp_path / "seen").read_text().split() == [f"00-{trace}-{e['span_id']}-01" for e in checks]

    verdicts = wait_until(lambda: len(spans := receiver.named("verify_task")) == 2 and spans, timeout=SPAN_WAIT_S,
                          message="both checks' spans")
    failed, passed = sorted(verdicts, key=lambda v: v["start"])
    assert failed["status"] == Status.STATUS_CODE_ERROR and passed["status"] == Status.STATUS_CODE_UNSET
    assert failed["attributes"]["muxd.task.verification.status"] == "failed"
    assert failed["attributes"]["process.exit.code"] == 1 and failed["message"] == "the check failed (exit 1)"
    for verdict, execution in zip((failed, passed), checks):
        assert verdict["trace_id"] == trace and verdict["parent_span_id"] is None
        assert verdict["attributes"]["muxd.task.id"] == task["id"]
        assert verdict["attributes"]["muxd.execution.id"] == execution["id"]
        child = wait_until(lambda e=execution: receiver.span_of(e["id"]), timeout=SPAN_WAIT_S,
                           message="the check's command span")
        assert (child["trace_id"], child["span_id"]) == (trace, execution["span_id"])
        assert child["parent_span_id"] == verdict["span_id"]
        assert verdict["start"] <= child["start"] and child["end"] <= verdict["end"]
    for prompt in prompts:
        turn = wait_until(lambda e=prompt: receiver.span_of(e["id"]), timeout=SPAN_WAIT_S, message="a turn's span")
        assert turn["trace_id"] == trace and turn["attributes"]["muxd.task.id"] == task["id"]


def test_what_runs_when_the_daemon_stops_is_sent_before_it_goes(traced_server, receiver):
    """A check still running at the stop: its command ends interrupted and the check's span is cut
    short with it; both are sent as the daemon stops, the command's still the check's child."""
    s = traced_server
    pane = start_fake_agent(s, "worker")
    s.cli("task", "add", "slow check", "--verify-cmd", "sleep 600", check=True)
    s.cli("task", "run", "-t", pane, check=True)
    task = wait_until(lambda: (t := _task(s, "slow check"))["verification_result"] and
                      t["verification_result"]["status"] == "running" and t, timeout=60, message="the check running")
    s.stop()
    verdict = wait_until(lambda: receiver.named("verify_task"), timeout=SPAN_WAIT_S, message="the check's span")[0]
    assert verdict["status"] == Status.STATUS_CODE_ERROR and verdict["message"] == "the daemon stopped during the check"
    assert verdict["attributes"]["muxd.task.verification.status"] == "interrupted"
    command = next(sp for sp in receiver.spans if sp["name"] == "command sleep")
    assert command["attributes"]["muxd.execution.status"] == "interrupted" and command["status"] == Status.STATUS_CODE_ERROR
    assert (command["trace_id"], command["parent_span_id"]) == (task["id"].replace("-", ""), verdict["span_id"])


def _task(server: MuxdTestServer, title: str) -> dict[str, Any]:
    listed = json.loads(server.cli("task", "ls", "--json", check=True).stdout)
    return next(t for t in listed["tasks"] if t["title"] == title)


SDK_MISSING = """\
import sys

class _NotInstalled:
    # As on a machine without the muxd[otel] extra: the SDK and its exporters are not there.
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""


def test_without_the_extra_muxd_runs_as_before_and_says_so_once(receiver, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SDK_MISSING)
    server = MuxdTestServer(env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "PYTHONPATH": str(site)}).start()
    try:
        for _ in range(2):
            assert run_json(server, "--trace-id", TRACE, "--", "true")["status"] == "success"
        log = server.log_path.read_text()
    finally:
        server.stop()  # a daemon that exported would send what it queued now
    said = [line for line in log.splitlines() if "OpenTelemetry SDK is missing" in line]
    assert len(said) == 1 and "OTEL_EXPORTER_OTLP_ENDPOINT" in said[0] and "muxd[otel]" in said[0], log
    assert receiver.spans == []


def test_the_export_is_configured_by_the_standard_variables(caplog, receiver):
    assert not SpanExport.from_env({}).on  # nothing configured: nothing said either
    endpoint = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{receiver.endpoint}/v1/traces"}
    assert not SpanExport.from_env({**endpoint, "OTEL_SDK_DISABLED": "true"}).on
    assert not SpanExport.from_env({**endpoint, "OTEL_TRACES_EXPORTER": "none"}).on
    assert caplog.records == []
    with caplog.at_level(logging.ERROR, logger="muxd.telemetry.export"):
        assert not SpanExport.from_env({**endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}).on
    assert [r.getMessage() for r in caplog.records] == [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set but muxd exports traces over http/protobuf only, not grpc: "
        "no spans are exported"]
    # The base URL of every signal gets the traces path; the endpoint is the one named, not the process's.
    export = SpanExport.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint + "/",
                                  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"})
    assert export.on
    ended = Execution(id="exec_1_0000abcd", pane_id="%1", pane_key="r/%1", agent_name="a", kind="command",
                      status="timeout", message="make test", queued_at=100.0, started_at=101.0, completed_at=130.5)
    export.execution_ended(ended)
    export.close()  # sends what waits
    [span] = receiver.spans
    assert span["name"] == "command make" and span["status"] == Status.STATUS_CODE_ERROR
    assert (span["start"], span["end"]) == (100 * NS_PER_S, int(130.5 * NS_PER_S))
    assert span["events"] == ["muxd.execution.started"] and receiver.paths == ["/v1/traces"]
