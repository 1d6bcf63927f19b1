"""`AuditRow`: one row of the audit trail, as the store keeps it and `get-tool-history` sends it.

Apart from audit.py (the table's SQL) so that the protocol, which carries rows in ToolHistory,
names it without importing sqlite.
"""

from __future__ import annotations

import msgspec


class AuditRow(msgspec.Struct, frozen=True, kw_only=True):
    ts: float
    principal: str
    kind: str                       # "mcp" (a tool call), "request" (a denied request), "host" (another host's action)
    tool: str
    args_sha256: str
    status: str                     # ok | error | denied | rate_limited | timeout
    error_code: str | None
    rows: int
    latency_ms: float
