"""The history's counts and sums read from the tallies that triggers keep (schema migration 8),
for the queries those tallies can answer: the whole history (no scope), filtered at most by
agent, the failure family and a start time. A window's whole hours come from the hourly tallies;
the part of an hour at its start from the rows themselves, through an index. Any other query is
execution_queries.py's (`covers` says which). At a million rows a total then reads a handful
of rows, stats a few thousand, failure patterns a few dozen, instead of every index entry.
"""

from __future__ import annotations

import math
from muxd.executions.record import FAILED_STATUSES
from muxd.store.execution_queries import FAILURES, NEWEST_FIRST, Sql
from muxd.store.execution_rows import FAILED_ROWS
from muxd.store.execution_store import ExecutionQuery

HOUR_S = 3600
_BUCKET = "CAST(at / 3600 AS INTEGER)"  # the triggers' hour of a row, word for word
# Filters the tallies do not split by: a query with any of them reads the rows.
_UNTALLIED = ("pane_key", "triggered_by", "task_id", "trace_id", "until")


def covers(query: ExecutionQuery, *, by_agent: bool = True, by_status: bool = False,
           failures: bool = False) -> bool:
    """Whether the tallies answer `query`: it sees everything and filters by nothing they do not
    split by (`by_agent`: by agent; `by_status`: by status; `failures`: the rows are failures, so
    a filter of the whole failure family changes nothing)."""
    if not query.scope.everything or any(getattr(query, name) is not None for name in _UNTALLIED):
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
    return f"at >= ? AND at < ? AND {_BUCKET} < ?", [since, (hour + 1) * HOUR_S, hour]


def count(query: ExecutionQuery) -> Sql | None:
    """The total of `query` from the status counts; None if they cannot say (a time or an agent:
    counting those rows through their index is as quick)."""
    if not covers(query, by_agent=False, by_status=True) or query.since is not None:
        return None
    statuses = query.statuses or ((query.status,) if query.status is not None else ())
    if not statuses:
        return "SELECT coalesce(sum(n), 0) FROM execution_status_counts", []
    return (f"SELECT coalesce(sum(n), 0) FROM execution_status_counts WHERE status IN "
            f"({', '.join('?' * len(statuses))})"), list(statuses)


def stats(query: ExecutionQuery) -> Sql:
    """Rows of the same shape as execution_queries.stats (agent, kind, status, JSON sums, last
    at, newest agent type), from the hourly tallies: the caller checked `covers(query)`."""
    agent, agent_params = ("agent_name = ?", [query.agent_name]) if query.agent_name is not None else ("1", [])
    since = query.since
    if since is None:
        parts, params = [f"SELECT agent_name, kind, status, n, cost, costs, tokens, duration_ms, durations "
                         f"FROM execution_hours WHERE {agent}"], [*agent_params]
    else:
        edge, edge_params = _edge(since)
        parts = [f"SELECT agent_name, kind, status, n, cost, costs, tokens, duration_ms, durations "
                 f"FROM execution_hours WHERE hour >= ? AND {agent}",
                 f"SELECT agent_name, kind, status, 1, coalesce(cost_usd, 0), cost_usd IS NOT NULL, "
                 f"coalesce(tokens_used, 0), coalesce(duration_ms, 0), duration_ms IS NOT NULL "
                 f"FROM executions INDEXED BY executions_at WHERE {edge} AND {agent}"]
        params = [_first_hour(since), *agent_params, *edge_params, *agent_params]
    window = "at >= ?" if since is not None else "1"
    window_params = [since] if since is not None else []
    one = f"FROM executions WHERE agent_name = a AND kind = k AND status = s AND {window}"
    return (f"WITH sums(a, k, s, n, cost, costs, tokens, duration_ms, durations) AS ("
            f"{' UNION ALL '.join(parts)}), "
            f"grouped AS (SELECT a, k, s, sum(n) AS n, total(cost) AS cost, sum(costs) AS costs, "
            f"sum(tokens) AS tokens, sum(duration_ms) AS duration_ms, sum(durations) AS durations "
            f"FROM sums GROUP BY a, k, s HAVING sum(n) > 0) "
            f"SELECT a, k, s, json_array(n, cost, tokens, duration_ms, durations, costs), "
            f"(SELECT max(at) {one}), (SELECT agent_type {one} ORDER BY at DESC LIMIT 1) FROM grouped"), \
        [*params, *window_params, *window_params]


def error_patterns(query: ExecutionQuery) -> Sql:
    """Rows of the same shape as execution_queries.error_patterns, the counts from the failure
    tallies: the caller checked `covers(query, by_agent=False, failures=True)`."""
    since = query.since
    if since is None:
        counted, params = "SELECT stack_hash AS h, n FROM failure_counts WHERE n > 0", []
        window, window_params = "", []
    else:
        edge, edge_params = _edge(since)
        counted = (f"SELECT h, sum(n) AS n FROM (SELECT stack_hash AS h, n FROM failure_hours WHERE hour >= ? "
                   f"UNION ALL SELECT stack_hash, 1 FROM executions WHERE {FAILED_ROWS} AND {edge}) "
                   f"GROUP BY h HAVING sum(n) > 0")
        params = [_first_hour(since), *edge_params]
        window, window_params = " AND at >= ?", [since]
    rows = f"FROM {FAILURES} WHERE {FAILED_ROWS} AND stack_hash = h{window}"
    return (f"WITH counted AS ({counted}), patterns AS (SELECT h, n, (SELECT min(at) {rows}) AS first_seen, "
            f"(SELECT seq {rows} {NEWEST_FIRST} LIMIT 1) AS newest FROM counted) "
            f"SELECT h, n, first_seen, at, id, task_id, trace_id, error_message, error_type "
            f"FROM patterns JOIN executions ON seq = newest {NEWEST_FIRST} LIMIT ? OFFSET ?"), \
        [*params, *window_params, *window_params, query.limit, query.offset]

