"""`Execution` <-> a row of the `executions` table, and `ExecutionQuery` -> a WHERE clause.

Columns follow the struct's fields (schema migration 2): scalars as they are, `error` as
error_type / error_message / stack_hash (failures group on them), lists and maps as JSON.
"""

from __future__ import annotations

from typing import Any

import msgspec

from muxd.executions.record import ACTIVE_STATUSES, Execution, ExecutionError
from muxd.store.execution_store import ExecutionQuery, Scope

_JSON_FIELDS = frozenset({"tool_calls", "files_written", "sources"})
_ERROR_COLUMNS = ("error_type", "error_message", "stack_hash")
_FIELDS: tuple[str, ...] = Execution.__struct_fields__
COLUMNS: tuple[str, ...] = tuple(column for name in _FIELDS
                                 for column in (_ERROR_COLUMNS if name == "error" else (name,)))
SELECT_COLUMNS = ", ".join(COLUMNS)
UPSERT = (f"INSERT INTO executions ({SELECT_COLUMNS}) VALUES ({', '.join('?' * len(COLUMNS))}) "
          f"ON CONFLICT(id) DO UPDATE SET "
          + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "id"))

# Word for word the WHERE of the partial index executions_failures: SQLite uses a partial index
# only for a query whose WHERE contains the index's own terms.
FAILED_ROWS = "status IN ('failed', 'timeout', 'interrupted') AND stack_hash IS NOT NULL"
_ACTIVE_LIST = ", ".join(f"'{status}'" for status in sorted(ACTIVE_STATUSES))
ACTIVE_ROWS = f"status IN ({_ACTIVE_LIST})"
ENDED_ROWS = f"status NOT IN ({_ACTIVE_LIST})"

_json_encoder = msgspec.json.Encoder()
_list_decoder = msgspec.json.Decoder(list[str])
_sources_decoder = msgspec.json.Decoder(dict[str, str])


def to_row(execution: Execution) -> tuple[Any, ...]:
    """The values of COLUMNS for `execution`."""
    values: list[Any] = []
    for name in _FIELDS:
        value = getattr(execution, name)
        if name == "error":
            values.extend((None, None, None) if value is None
                          else (value.type, value.message, value.stack_hash))
        elif name in _JSON_FIELDS:
            values.append(_json_encoder.encode(value).decode() if value else None)
        else:
            values.append(value)
    return tuple(values)


def from_row(row: tuple[Any, ...]) -> Execution:
    """The `Execution` a row of COLUMNS holds."""
    fields = dict(zip(COLUMNS, row))
    error_type, error_message, stack_hash = (fields.pop(c) for c in _ERROR_COLUMNS)
    if error_type is not None:
        fields["error"] = ExecutionError(type=error_type, message=error_message or "",
                                         stack_hash=stack_hash or "")
    for name in ("tool_calls", "files_written"):
        fields[name] = _list_decoder.decode(fields[name]) if fields[name] else []
    fields["sources"] = _sources_decoder.decode(fields["sources"]) if fields["sources"] else {}
    fields["transcript_truncated"] = bool(fields["transcript_truncated"])
    return Execution(**fields)


def scope_clause(scope: Scope) -> tuple[str, list[Any]]:
    """A WHERE term for the rows `scope` may see ("" when it sees everything)."""
    if scope.pane_keys is None:
        return "", []
    terms, params = [], []
    if scope.pane_keys:
        # One JSON parameter, not one per pane: a token may hold more panes than SQLite has variables.
        terms.append("pane_key IN (SELECT value FROM json_each(?))")
        params.append(_json_encoder.encode(sorted(scope.pane_keys)).decode())
    if scope.principal is not None:
        terms.append("principal = ?")
        params.append(scope.principal)
    return f"({' OR '.join(terms) or '0'})", params


def where_clause(query: ExecutionQuery, *extra: str) -> tuple[str, list[Any]]:
    """`WHERE …` for `query`'s filters (not its limit/offset) and the `extra` terms, or ""."""
    terms = [term for term in extra if term]
    scope, params = scope_clause(query.scope)
    if scope:
        terms.append(scope)
    for column in ("agent_name", "pane_key", "status", "triggered_by", "task_id", "trace_id"):
        value = getattr(query, column)
        if value is not None:
            terms.append(f"{column} = ?")
            params.append(value)
    if query.statuses:
        terms.append(f"status IN ({', '.join('?' * len(query.statuses))})")
        params.extend(query.statuses)
    if query.since is not None:
        terms.append("at >= ?")
        params.append(query.since)
    if query.until is not None:
        terms.append("at < ?")
        params.append(query.until)
    return (f"WHERE {' AND '.join(terms)}" if terms else ""), params
