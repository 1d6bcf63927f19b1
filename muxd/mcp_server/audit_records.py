"""One finished call as the daemon's audit and metrics take it (`RecordCall`): what every MCP tool
call through the guards (guards.py) and every action of the web view (muxd/web/actions.py) send.
Free of the MCP SDK: the web view imports it."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Any

from muxd.client.connection import Client
from muxd.config import AUDIT_ERROR_CODE_MAX_CHARS, AUDIT_TOOL_MAX_CHARS
from muxd.errors import ClientClosed, MuxdError
from muxd.protocol.access_messages import RecordCall
from muxd.protocol.pane_messages import Error
from muxd.store.audit import args_sha256

log = logging.getLogger(__name__)
# Error codes that mean "not allowed": audited with status `denied`.
_DENIED_CODES = ("forbidden", "unauthorized")


def audit_record(tool: str, arguments: Any, error_code: str | None, rows: int, latency_ms: float,
                 ) -> dict[str, Any]:
    """The fields of one RecordCall: the arguments only as their sha256."""
    return dict(tool=tool[:AUDIT_TOOL_MAX_CHARS], args_sha256=args_sha256(arguments or {}),
                status=call_status(error_code),
                error_code=error_code[:AUDIT_ERROR_CODE_MAX_CHARS] if error_code else error_code, rows=rows,
                latency_ms=round(latency_ms, 3))


def call_status(error_code: str | None) -> str:
    """The audit status of a call that ended with `error_code` (None: it succeeded)."""
    if error_code is None:
        return "ok"
    if error_code in _DENIED_CODES:
        return "denied"
    if error_code in ("rate_limited", "timeout"):
        return error_code
    return "error"


def result_rows(result: Any) -> int:
    """How many items a result carries: a list's length, a dict's longest list, else 0 or 1."""
    if result is None:
        return 0
    if isinstance(result, list):
        return len(result)
    if isinstance(result, dict):
        lengths = [len(v) for v in result.values() if isinstance(v, list)]
        return max(lengths) if lengths else 1
    return 1


def send_audit_record(client: Client, record: dict[str, Any]) -> None:
    """Send one audit record, written before the call's result leaves (so it reaches the daemon
    ahead of the caller's next request), without waiting for the daemon's answer: that round
    trip was in every call's latency. A daemon that refuses it or is gone costs a log line."""
    try:
        reply = client.send(RecordCall, **record)
    except MuxdError as exc:
        log.warning("audit record of %s not written: %r", record.get("tool"), exc)
        return
    reply.add_done_callback(partial(_recorded, record.get("tool")))


def _recorded(tool: object, reply: asyncio.Future[Any]) -> None:
    if reply.cancelled():
        return
    failure = reply.exception()
    if failure is None and isinstance(reply.result(), Error):
        failure = reply.result()
    if isinstance(failure, ClientClosed):  # the MCP server closing: the record left, its answer did not come
        log.debug("audit record of %s sent, its answer lost: %r", tool, failure)
    elif failure is not None:
        log.warning("audit record of %s not written: %r", tool, failure)
