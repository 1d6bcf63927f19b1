"""The audit table: one row per MCP tool call and per denied protocol request."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from muxd.config import AUDIT_KEEP_ROWS, AUDIT_PRUNE_EVERY_ROWS
from muxd.store.audit_row import AuditRow
from muxd.store.database import transaction
from muxd.store.hosts import HOST_SQL, OWN_ROWS


# A row is an AuditRow: the store hands out exactly what get_tool_history sends.
_COLUMNS = "ts, principal, kind, tool, args_sha256, status, error_code, rows, latency_ms"


def append(db: sqlite3.Connection, records: list[AuditRow], *, keep_rows: int = AUDIT_KEEP_ROWS,
           prune_every: int = AUDIT_PRUNE_EVERY_ROWS) -> None:
    """Add rows in one transaction; each time the ids pass a multiple of `prune_every`, forget this
    host's rows older than the newest `keep_rows` of the table. On a database several hosts share,
    each trims only the rows it wrote (store/hosts.py), when the ids pass such a multiple in its
    own batch: the table stays about `keep_rows` long, each host's share aging out with it."""
    if not records:
        return
    with transaction(db):
        db.executemany(f"INSERT INTO audit ({_COLUMNS}, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {HOST_SQL})",
                       [(r.ts, r.principal, r.kind, r.tool, r.args_sha256, r.status, r.error_code, r.rows,
                         r.latency_ms) for r in records])
        last = db.execute("SELECT max(id) FROM audit").fetchone()[0]  # the rows' last: ids rising
        if last // prune_every > (last - len(records)) // prune_every:
            db.execute(f"DELETE FROM audit WHERE id <= ? AND {OWN_ROWS}", (last - keep_rows,))


def recent(db: sqlite3.Connection, *, limit: int, tool: str | None = None,
           principal: str | frozenset[str] | None = None, status: str | None = None) -> list[AuditRow]:
    """The newest rows first, filtered by whichever of tool / principal (one, or any of a set) /
    status is given."""
    where: list[str] = []
    params: list[object] = []
    for column, value in (("tool", tool), ("principal", principal), ("status", status)):
        if isinstance(value, frozenset):
            where.append(f"{column} IN ({', '.join('?' * len(value))})")
            params.extend(sorted(value))
        elif value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = db.execute(f"SELECT {_COLUMNS} FROM audit {clause} ORDER BY id DESC LIMIT ?", (*params, limit))
    return [AuditRow(ts=r[0], principal=r[1], kind=r[2], tool=r[3], args_sha256=r[4], status=r[5],
                        error_code=r[6], rows=r[7], latency_ms=r[8]) for r in rows]


def args_sha256(args: Any) -> str:
    """sha256 of the canonical JSON of `args` (sorted keys, no spaces): what the audit keeps."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
