"""W3C trace context (https://www.w3.org/TR/trace-context/): the trace and span ids a caller
gives an execution, checked and put in their one spelling; the `traceparent` a traced pane gets.

A trace id is 32 lowercase hex digits, a span id 16, neither all zeros. A UUID (the seed's own
example of a correlation id, and the spelling of task ids) is 128 bits too: it is taken for the
same 32 digits, so a task's id is also the id of its trace."""

from __future__ import annotations

import re
import secrets

from muxd.errors import BadRequest

# The JSON Schema patterns of the MCP parameters say the same as the checks below (all-zero ids
# cannot be said without look-ahead, which pydantic's regex engine has not: the daemon refuses them).
TRACE_ID_PATTERN = r"^([0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$"
SPAN_ID_PATTERN = r"^[0-9a-f]{16}$"
TRACE_ID_HELP = "W3C trace id (32 hex digits, or a UUID)"
SPAN_ID_HELP = "W3C span id of this execution (16 hex digits; default: a new one)"

_TRACE_ID = re.compile(TRACE_ID_PATTERN)
_SPAN_ID = re.compile(SPAN_ID_PATTERN)
TRACE_FLAGS_SAMPLED = "01"


def trace_id_of(value: str, field: str = "trace_id") -> str:
    """`value` as a W3C trace id (32 hex digits); BadRequest naming `field` if it is none."""
    if not _TRACE_ID.match(value):
        raise BadRequest(f"{field} must be a W3C trace id: 32 lowercase hex digits (or a UUID), got {value!r}",
                         field=field)
    trace_id = value.replace("-", "")
    if trace_id == "0" * 32:
        raise BadRequest(f"{field} must not be all zeros", field=field)
    return trace_id


def span_id_of(value: str, field: str = "span_id") -> str:
    if not _SPAN_ID.match(value):
        raise BadRequest(f"{field} must be a W3C span id: 16 lowercase hex digits, got {value!r}", field=field)
    if value == "0" * 16:
        raise BadRequest(f"{field} must not be all zeros", field=field)
    return value


def trace_context(trace_id: str | None, span_id: str | None) -> tuple[str | None, str | None]:
    """The (trace id, span id) an execution is recorded with: checked, a new span id when only the
    trace was given, (None, None) for an untraced one. A span id needs its trace."""
    if trace_id is None:
        if span_id is not None:
            raise BadRequest("span_id needs a trace_id: a span belongs to a trace", field="span_id")
        return None, None
    return trace_id_of(trace_id), span_id_of(span_id) if span_id is not None else new_span_id()


def query_trace_id(value: str | None) -> str | None:
    """A trace id to look executions up by: a UUID as its 32 digits (what was stored for it);
    anything else as given (rows written before ids were checked keep their old spelling)."""
    if value is None:
        return None
    try:
        return trace_id_of(value)
    except BadRequest:
        return value


def new_trace_id() -> str:
    while True:
        value = secrets.token_hex(16)
        if value != "0" * 32:
            return value


def new_span_id() -> str:
    while True:
        value = secrets.token_hex(8)
        if value != "0" * 16:
            return value


def task_trace_id(task_id: str) -> str | None:
    """The trace of a task of the queue: its uuid's 32 digits (None for an id that is no uuid)."""
    try:
        return trace_id_of(task_id, "task_id")
    except BadRequest:
        return None


def traceparent(trace_id: str, span_id: str) -> str:
    """The `traceparent` header (and TRACEPARENT variable) naming span `span_id` of `trace_id`."""
    return f"00-{trace_id}-{span_id}-{TRACE_FLAGS_SAMPLED}"
