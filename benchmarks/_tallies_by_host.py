"""A prototype for bench_fleet_load.py `--tallies-by-host`: the history's tallies (pg_schema.py,
migration 4) keyed by host too, so that no two daemons ever update the same tally row (each
host's rows have one writer: its daemon's). Applied to the benchmark's own database only, to
measure the remedy; the read queries, which sum the tallies, would need `failure_counts` summed
by stack hash before this could ship (execution_tallies.error_patterns reads its `n` as is).
"""

from __future__ import annotations

from typing import Any

from muxd.store.pg_schema import _TALLIES, _kept

_KEYS = {  # table -> its key without the host
    "execution_status_counts": "status",
    "execution_hours": "agent_name, kind, status, hour",
    "failure_counts": "stack_hash",
    "failure_hours": "stack_hash, hour",
}


def by_host(body: str) -> str:
    """A tally's functions and triggers with the host in each row's key (positional VALUES end in r.host)."""
    for table, key in _KEYS.items():
        body = body.replace(f"ON CONFLICT ({key})", f"ON CONFLICT ({key}, host)")
    for table in _KEYS:
        start = body.find(f"INSERT INTO {table} AS t VALUES (")
        if start < 0:
            continue
        depth, i = 0, body.index("(", start + len(f"INSERT INTO {table} AS t VALUES"))
        while True:
            depth += {"(": 1, ")": -1}.get(body[i], 0)
            if depth == 0:
                break
            i += 1
        body = body[:i] + ", r.host" + body[i:]
    return body.replace("AND n = 0;", "AND host = r.host AND n = 0;")


def apply(c: Any) -> None:
    """Re-key the tallies of the database `c` is connected to (empty tallies: nothing to move)."""
    statements = []
    for table, key in _KEYS.items():
        statements.append(f"ALTER TABLE {table} ADD COLUMN host text NOT NULL DEFAULT ''; "
                          f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey; "
                          f"ALTER TABLE {table} ADD PRIMARY KEY ({key}, host);")
    for name in _TALLIES:
        statements.append(f"DROP TRIGGER executions_{name}_rows ON executions; "
                          f"DROP TRIGGER executions_{name}_update ON executions; "
                          f"DROP FUNCTION executions_{name}_kept(); DROP FUNCTION executions_{name}(executions, integer);")
        statements.append(by_host(_kept(name)))
    c.execute("\n".join(statements))
