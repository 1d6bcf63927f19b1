"""Executions and task checks as OpenTelemetry spans: W3C trace context (trace_ids.py), the
spans muxd records (spans.py), and their export over OTLP when the `muxd[otel]` extra is
installed and an endpoint is configured (export.py, otlp.py)."""
