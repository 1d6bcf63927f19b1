"""`Execution` <-> a row of the `executions` table.

Columns follow the struct's fields (schema migration 2): scalars as they are, `error` as
error_type / error_message / stack_hash (failures group on them), lists and maps as JSON.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from muxd.executions.record import ACTIVE_STATUSES, FAILED_STATUSES, Execution, ExecutionError
from muxd.store.hosts import HOST_SQL

_JSON_FIELDS = frozenset({"tool_calls", "files_written", "sources"})
_ERROR_COLUMNS = ("error_type", "error_message", "stack_hash")
# `host` is written by the database (muxd_host(), below) and read after the columns written.
_FIELDS: tuple[str, ...] = tuple(name for name in Execution.__struct_fields__ if name != "host")
_HOST_AT = Execution.__struct_fields__.index("host")
# `at`, last, is derived: when the execution happened (started, else queued), what lists sort on.
COLUMNS: tuple[str, ...] = tuple(column for name in _FIELDS
                                 for column in (_ERROR_COLUMNS if name == "error" else (name,))) + ("at",)
SELECT_COLUMNS = ", ".join(COLUMNS)
_ERROR_AT = _FIELDS.index("error")
_JSON_AT = tuple(COLUMNS.index(name) for name in sorted(_JSON_FIELDS))  # (after error's three columns)
READ_COLUMNS = f"{SELECT_COLUMNS}, host"  # what from_row reads
# The row's host (store/hosts.py) is the daemon's that first wrote it: an update keeps it.
_VALUES = f"({', '.join('?' * len(COLUMNS))}, {HOST_SQL})"
_ON_CONFLICT = f" ON CONFLICT(id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS if c != 'id')}"
# The most rows one upsert writes (upsert_of): well under SQLite's 32,766 parameters a statement.
ROWS_PER_STATEMENT = 50


@functools.lru_cache(maxsize=ROWS_PER_STATEMENT)
def upsert_of(rows: int) -> str:
    """The upsert of `rows` rows at once, their values one after the other (no id twice)."""
    return f"INSERT INTO executions ({SELECT_COLUMNS}, host) VALUES {', '.join([_VALUES] * rows)}{_ON_CONFLICT}"


UPSERT = upsert_of(1)

# Word for word the WHERE of the partial index executions_failures: SQLite uses a partial index
# only for a query whose WHERE contains the index's own terms.
FAILED_ROWS = f"status IN ({', '.join(repr(s) for s in FAILED_STATUSES)}) AND stack_hash IS NOT NULL"
_ACTIVE_LIST = ", ".join(f"'{status}'" for status in sorted(ACTIVE_STATUSES))
ACTIVE_ROWS = f"status IN ({_ACTIVE_LIST})"
ENDED_ROWS = f"status NOT IN ({_ACTIVE_LIST})"

_json_encoder = msgspec.json.Encoder()
_list_decoder = msgspec.json.Decoder(list[str])
_sources_decoder = msgspec.json.Decoder(dict[str, str])


def to_row(execution: Execution) -> tuple[Any, ...]:
    """The values of COLUMNS for `execution` (its fields taken in one call: a third of the time
    of reading them one by one, on the writer thread, for every save)."""
    every = msgspec.structs.astuple(execution)
    values = every[:_HOST_AT] + every[_HOST_AT + 1:]  # in the order of _FIELDS (no host)
    error = values[_ERROR_AT]
    row = [*values[:_ERROR_AT], *((None, None, None) if error is None else
                                  (error.type, error.message, error.stack_hash)), *values[_ERROR_AT + 1:]]
    for at in _JSON_AT:
        value = row[at]
        row[at] = _json_encoder.encode(value).decode() if value else None
    row.append(execution.started_at if execution.started_at is not None else execution.queued_at)
    return tuple(row)


def from_row(row: tuple[Any, ...]) -> Execution:
    """The `Execution` a row of READ_COLUMNS holds."""
    fields = dict(zip((*COLUMNS, "host"), row))
    del fields["at"]
    error_type, error_message, stack_hash = (fields.pop(c) for c in _ERROR_COLUMNS)
    if error_type is not None:
        fields["error"] = ExecutionError(type=error_type, message=error_message or "",
                                         stack_hash=stack_hash or "")
    for name in ("tool_calls", "files_written"):
        fields[name] = _list_decoder.decode(fields[name]) if fields[name] else []
    fields["sources"] = _sources_decoder.decode(fields["sources"]) if fields["sources"] else {}
    fields["transcript_truncated"] = bool(fields["transcript_truncated"])
    return Execution(**fields)
