"""The history's counts and sums read from the tallies that triggers keep (schema migration 8),
for the queries those tallies can answer: the whole history (no scope), filtered at most by
agent, the failure family and a start time (a total: any scope too, from migration 11's scope
counts). A window's whole days come from the day tallies (migration 11), its whole hours before
them from the hourly ones, the part of an hour at its start from the rows themselves, through an
index. Any other query is execution_queries.py's (`covers` says which). At a million rows a
total then reads a handful of rows, stats a few thousand, failure patterns a few dozen, instead
of every index entry.
PostgreSQL's tallies have a row per host as well (its migration 9: hosts never share a tally row),
so every read here sums over the rows of a key, which SQLite's single row answers the same.
"""

from __future__ import annotations

import math
from muxd.executions.record import FAILED_STATUSES
from muxd.store.execution_queries import AGENTS_CTE, FAILURES, KINDS_CTE, NEWEST_FIRST, STATUSES_CTE, Sql, visible
from muxd.store.execution_rows import FAILED_ROWS
from muxd.store.execution_store import ExecutionQuery

HOUR_S = 3600
BUCKET = "CAST(at / 3600 AS INTEGER)"  # the triggers' hour of a row, word for word
# Filters the tallies do not split by: a query with any of them reads the rows (a host: SQLite's
# tallies; PostgreSQL's split by host, `by_host`).
_UNTALLIED = ("pane_key", "triggered_by", "task_id", "trace_id", "host", "until")


def covers(query: ExecutionQuery, *, by_agent: bool = True, by_status: bool = False,
           failures: bool = False, by_host: bool = False, scoped: bool = False) -> bool:
    """Whether the tallies answer `query`: it sees everything (or any scope, with `scoped`: the
    scope counts') and filters by nothing they do not split by (`by_agent`: by agent;
    `by_status`: by status; `by_host`: by host, PostgreSQL's since its migration 9; `failures`:
    the rows are failures, so a filter of the whole failure family changes nothing)."""
    untallied = [name for name in _UNTALLIED if not (by_host and name == "host")]
    if not (scoped or query.scope.everything) or any(getattr(query, name) is not None for name in untallied):
        return False
    if query.agent_name is not None and not by_agent:
        return False
    statuses = query.statuses or ((query.status,) if query.status is not None else ())
    return not statuses or by_status or (failures and set(statuses) == set(FAILED_STATUSES))


def _first_hour(since: float) -> int:
    """The first whole hour at or after `since`."""
    return math.ceil(since / HOUR_S)


def _edge(since: float) -> Sql:
    """Terms for the rows from `since` to the first whole hour (the hourly tallies hold the rest):
    by `at` for the index, by the triggers' own hour so that no row is counted twice."""
    hour = _first_hour(since)
    return f"at >= ? AND at < ? AND {BUCKET} < ?", [since, (hour + 1) * HOUR_S, hour]


def count(query: ExecutionQuery, *, by_host: bool = False) -> Sql | None:
    """The total of `query` from the status counts (an agent's: from its day tallies; a scope's:
    from the scope counts, a row per pane, principal and status that each execution is counted in
    once: migration 11), the sum of every host's (of the one host it filters by, with `by_host`:
    PostgreSQL's tallies have a row per host); None if they cannot say (a time: counting those rows
    through their index is as quick)."""
    scoped = not query.scope.everything
    if (not covers(query, by_agent=not scoped, by_status=True, by_host=by_host, scoped=scoped)
            or query.since is not None or "" in query.scope.principals):  # '' is the counts' no principal
        return None
    statuses = query.statuses or ((query.status,) if query.status is not None else ())
    if scoped:
        table, (term, params) = "execution_scope_counts", visible(query.scope)
        terms = [term]
    elif query.agent_name is not None:
        table, terms, params = "execution_days", ["agent_name = ?"], [query.agent_name]
    else:
        table, terms, params = "execution_status_counts", [], []
    if statuses:
        terms.append(f"status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if query.host is not None:
        terms.append("host = ?")
        params.append(query.host)
    return f"SELECT coalesce(sum(n), 0) FROM {table} WHERE {' AND '.join(terms) or 'true'}", params


_SUMS = ("n", "cost", "tokens", "duration_ms", "durations", "costs")  # execution_queries.stats' JSON order


def stats(query: ExecutionQuery) -> Sql:
    """Rows of the same shape as execution_queries.stats (agent, kind, status, JSON sums, last
    at, newest agent type) for each agent, kind and status: the sums of its day tallies from the
    window's first whole day (migration 11), of its hourly tallies before that, each a range of
    their key (no sort), and of its rows in the part-hour at the window's start (a range of the
    covering index executions_agent_kind_status), packed once. The caller checked
    `covers(query)` (with `by_host` for a query of one host: PostgreSQL's)."""
    one = "agent_name = name AND kind = k AND status = s"
    # A host's: its own tally rows and rows, a parameter at each use of `one` (each the first of its terms).
    host = [] if query.host is None else [query.host]
    one += "" if query.host is None else " AND host = ?"
    tallied_sums = ", ".join(_SUMS)
    since = query.since
    # Only the agent, kind and status with a tally in the window's hours (the part-hour's too): the
    # others, most of them, cost one seek instead of four.
    tallied = f"EXISTS (SELECT 1 FROM execution_hours WHERE {one}{'' if since is None else ' AND hour >= ?'})"
    tallied_params = [*host] if since is None else [*host, _first_hour(since) - 1]
    if since is None:
        window, window_params = "true", [*host]
        parts, params = [f"SELECT {tallied_sums} FROM execution_days WHERE {one}"], [*host]
    else:
        edge, edge_params = _edge(since)
        window, window_params = "at >= ?", [*host, since]
        hour = _first_hour(since)
        day = -(-hour // 24)  # the first whole day: a row's day is its hour's (schema._DAY)
        if day >= 1:  # (before it, a negative hour's day would not be its hour's floor)
            parts = [f"SELECT {tallied_sums} FROM execution_days WHERE {one} AND day >= ?",
                     f"SELECT {tallied_sums} FROM execution_hours WHERE {one} AND hour >= ? AND hour < ?"]
            params = [*host, day, *host, hour, day * 24]
        else:
            parts, params = [f"SELECT {tallied_sums} FROM execution_hours WHERE {one} AND hour >= ?"], [*host, hour]
        parts.append("SELECT 1, coalesce(cost_usd, 0), coalesce(tokens_used, 0), coalesce(duration_ms, 0), "
                     "CASE WHEN duration_ms IS NULL THEN 0 ELSE 1 END, CASE WHEN cost_usd IS NULL THEN 0 ELSE 1 END "
                     f"FROM executions WHERE {one} AND {edge}")
        params += [*host, *edge_params]
    if query.agent_name is None:
        agents, agent_params = f"WITH RECURSIVE {AGENTS_CTE}", []
    else:
        agents, agent_params = "WITH agents(name) AS (VALUES (?))", [query.agent_name]
    summed = ", ".join(f"coalesce(sum({column}), 0)" for column in _SUMS)
    rows = f"FROM executions WHERE {one} AND {window}"
    return (f"{agents}, {STATUSES_CTE}, {KINDS_CTE}, combos AS MATERIALIZED (SELECT name, k, s "
            f"FROM agents CROSS JOIN kinds CROSS JOIN statuses WHERE name IS NOT NULL AND {tallied}) "
            f"SELECT name, k, s, (SELECT json_array({summed}) FROM ({' UNION ALL '.join(parts)}) AS part), "
            f"(SELECT max(at) {rows}), (SELECT agent_type {rows} ORDER BY at DESC NULLS LAST LIMIT 1) FROM combos"), \
        [*agent_params, *tallied_params, *params, *window_params, *window_params]


def error_patterns(query: ExecutionQuery) -> Sql:
    """Rows of the same shape as execution_queries.error_patterns, the counts from the failure
    tallies: the caller checked `covers(query, by_agent=False, failures=True)`."""
    since = query.since
    if since is None:
        # A fingerprint's count is the sum of its hosts' (PostgreSQL's migration 9; SQLite's one row).
        counted, params = ("SELECT stack_hash AS h, sum(n) AS n FROM failure_counts GROUP BY stack_hash "
                           "HAVING sum(n) > 0"), []
        window, window_params = "", []
    else:
        # Per fingerprint: its whole hours (a range of their key) and its part-hour (of its index).
        edge, edge_params = _edge(since)
        counted = (f"SELECT h, n FROM (SELECT stack_hash AS h, "
                   f"coalesce((SELECT sum(n) FROM failure_hours WHERE stack_hash = c.stack_hash AND hour >= ?), 0) + "
                   f"(SELECT count(*) FROM {FAILURES} WHERE {FAILED_ROWS} AND stack_hash = c.stack_hash AND {edge}) "
                   f"AS n FROM (SELECT DISTINCT stack_hash FROM failure_counts) c) counts WHERE n > 0")
        params = [_first_hour(since), *edge_params]
        window, window_params = " AND at >= ?", [since]
    rows = f"FROM {FAILURES} WHERE {FAILED_ROWS} AND stack_hash = h{window}"
    return (f"WITH counted AS ({counted}), patterns AS (SELECT h, n, (SELECT min(at) {rows}) AS first_seen, "
            f"(SELECT seq {rows} {NEWEST_FIRST} LIMIT 1) AS newest FROM counted) "
            f"SELECT h, n, first_seen, at, id, task_id, trace_id, error_message, error_type "
            f"FROM patterns JOIN executions ON seq = newest {NEWEST_FIRST} LIMIT ? OFFSET ?"), \
        [*params, *window_params, *window_params, query.limit, query.offset]

