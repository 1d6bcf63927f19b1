"""The OpenTelemetry SDK's side of the export: `SpanRecord`s become SDK spans with muxd's own ids
and times, batched on the SDK's worker thread and sent by its OTLP/HTTP exporter. Imported only
when an endpoint is configured; ImportError without the `muxd[otel]` extra."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from muxd import __version__
from muxd.telemetry.spans import SpanRecord

SERVICE = "muxd"
NS_PER_S = 1_000_000_000


class _GivenIds(IdGenerator):
    """Hands the SDK the ids muxd already chose for the span it is about to start (an execution's
    ids are in its record and its pane's TRACEPARENT: the exported span must carry the same)."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id


class OtlpSpans:
    def __init__(self, endpoint: str, env: Mapping[str, str]) -> None:
        """Spans to the OTLP/HTTP traces `endpoint` (a full URL, …/v1/traces)."""
        # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are read by Resource.create; ours only fills a gap.
        given = {} if env.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: SERVICE}
        self._ids = _GivenIds()
        self._provider = TracerProvider(resource=Resource.create(given), id_generator=self._ids,
                                        shutdown_on_exit=False)
        # The exporter reads the other standard OTEL_EXPORTER_OTLP_* variables (headers, timeout, TLS).
        self._provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        self._tracer = self._provider.get_tracer("muxd", __version__)

    def emit(self, record: SpanRecord) -> None:
        """Queue `record` for export (cheap: the batch goes out on the SDK's own thread)."""
        self._ids.trace_id, self._ids.span_id = int(record.trace_id, 16), int(record.span_id, 16)
        context = Context()  # no ambient span: the parent is the record's, or none
        if record.parent_span_id is not None:
            parent = SpanContext(int(record.trace_id, 16), int(record.parent_span_id, 16), is_remote=False,
                                 trace_flags=TraceFlags(TraceFlags.SAMPLED))
            context = trace.set_span_in_context(NonRecordingSpan(parent), context)
        span = self._tracer.start_span(record.name, context=context, attributes=record.attributes,
                                       start_time=int(record.start_s * NS_PER_S))
        for name, at in record.events:
            span.add_event(name, timestamp=int(at * NS_PER_S))
        if record.failed:
            span.set_status(Status(StatusCode.ERROR, record.status_message))
        span.end(end_time=int(record.end_s * NS_PER_S))

    def close(self, timeout_s: float) -> None:
        """Send what is queued, then stop; at most `timeout_s` (a collector that is down must not
        hold the daemon's exit: the SDK's retries run on in a thread nobody waits for)."""
        closer = threading.Thread(target=self._provider.shutdown, name="muxd-otlp-close", daemon=True)
        closer.start()
        closer.join(timeout_s)
