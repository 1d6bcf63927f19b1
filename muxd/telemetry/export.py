"""`SpanExport`: what the daemon tells of ended executions and of task checks, sent over OTLP when
an endpoint is configured and the `muxd[otel]` extra is installed, nothing otherwise.

Configured as any OpenTelemetry SDK is: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or
OTEL_EXPORTER_OTLP_ENDPOINT) in the daemon's environment turns it on; OTEL_SDK_DISABLED=true or
OTEL_TRACES_EXPORTER=none turn it off. Spans are queued on the loop and sent from the SDK's batch
thread: a slow or absent collector never holds a pane's output."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from muxd.executions.record import Execution
from muxd.tasks.model import Task, VerificationResult
from muxd.telemetry.spans import Check, SpanRecord, check_span, execution_span

if TYPE_CHECKING:
    from muxd.telemetry.otlp import OtlpSpans

log = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
SUPPORTED_PROTOCOL = "http/protobuf"
TRACES_PATH = "/v1/traces"
CLOSE_TIMEOUT_S = 5.0


def _sink(env: Mapping[str, str]) -> OtlpSpans | None:
    """The OTLP export `env` asks for, or None (saying why in the log when it asked but cannot have it)."""
    endpoint_variable = next((name for name in ENDPOINT_VARIABLES if env.get(name)), None)
    if endpoint_variable is None:
        return None
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true" or \
            env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    protocol = next((env[name] for name in PROTOCOL_VARIABLES if env.get(name)), SUPPORTED_PROTOCOL)
    if protocol.strip() != SUPPORTED_PROTOCOL:
        log.error("%s is set but muxd exports traces over %s only, not %s: no spans are exported",
                  endpoint_variable, SUPPORTED_PROTOCOL, protocol)
        return None
    try:
        from muxd.telemetry.otlp import OtlpSpans
    except ImportError as exc:
        log.warning("%s is set but the OpenTelemetry SDK is missing (%s): no spans are exported; "
                    "install the extra: pip install 'muxd[otel]'", endpoint_variable, exc.name or exc)
        return None
    endpoint = env[endpoint_variable]
    if endpoint_variable == "OTEL_EXPORTER_OTLP_ENDPOINT":  # the base URL of every signal (the spec's rule)
        endpoint = endpoint.rstrip("/") + TRACES_PATH
    log.info("exporting executions as spans over OTLP to %s", endpoint)
    return OtlpSpans(endpoint, env)


class SpanExport:
    def __init__(self, sink: OtlpSpans | None) -> None:
        self.sink = sink
        self._parents: dict[str, str] = {}  # execution id -> the span it is a child of (a check's)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SpanExport:
        return cls(_sink(env))

    @property
    def on(self) -> bool:
        return self.sink is not None

    def _emit(self, record: SpanRecord | None) -> None:
        if record is None or self.sink is None:
            return
        try:
            self.sink.emit(record)
        except Exception:  # telemetry must never take an execution's end down with it
            log.exception("exporting span %s", record.name)

    def execution_ended(self, execution: Execution) -> None:
        parent = self._parents.pop(execution.id, None)
        if self.sink is not None:
            self._emit(execution_span(execution, parent))

    def check_started(self, task: Task) -> Check:
        """A check of `task` begins: its span's ids (its execution runs in the task's trace under it)."""
        return Check.begin(task, time.time())

    def check_runs(self, check: Check, execution_id: str) -> None:
        """`execution_id` runs `check`: its span is the check's child."""
        if self.sink is not None:
            self._parents[execution_id] = check.span_id

    def check_ended(self, check: Check, result: VerificationResult | None) -> None:
        """`check` decided `result` (None: it was cut short, the daemon stopping)."""
        if self.sink is not None:
            self._emit(check_span(check, result, time.time()))

    def close(self) -> None:
        """Send what waits (at most CLOSE_TIMEOUT_S), at the daemon's stop."""
        if self.sink is not None:
            self.sink.close(CLOSE_TIMEOUT_S)
