"""The history over time (issue 31's charts): executions, failures, tokens and cost per agent,
kind and time bucket, in one grouped query.

Two shapes, as the history's other reads. A window the hourly tallies cover exactly (everything
in scope, filters they split by, a start on a whole hour and buckets of whole hours) sums the
tally rows of each agent, kind and status from that hour on: one range of their key each, found
by the same loose index scan of the agents as `stats`. Any other (sub-hour buckets, an end)
groups the rows themselves, each agent, kind and status a range of the covering index
executions_agent_kind_status from the window's start; a scoped token's, the rows of its panes
and of its principal, each from its own index (executions_pane_at, executions_principal_at).
Never a row outside the window. At 1M rows over 30 days (benchmarks/bench_history_queries.py,
p50/p95 on a loaded 2-core machine): a day by hour 3/7 ms, 6 h by 15 minutes 27/38 ms, a token's
day 10/33 ms, 30 days by day 101/134 ms (its 43k tally rows grouped: a page view, not a poll).
"""

from __future__ import annotations

from typing import Any

import msgspec

from muxd.executions.record import FAILED_STATUSES
from muxd.store.execution_queries import AGENTS_CTE, KINDS_CTE, STATUSES_CTE, Sql, where
from muxd.store.execution_store import ExecutionQuery, TimeBucket
from muxd.store.execution_tallies import HOUR_S, covers

# A row's bucket, counted from the window's start (a parameter) in buckets of a parameter's
# seconds; pg_history_sql.py says it as floor(), as PostgreSQL's CAST would round.
ROW_BUCKET = "CAST((at - ?) / ? AS INTEGER)"
_FAILED_LIST = ", ".join(f"'{status}'" for status in FAILED_STATUSES)


def from_tallies(query: ExecutionQuery, bucket_s: int, *, by_host: bool) -> bool:
    """Whether the hourly tallies answer `query` in buckets of `bucket_s`: they cover its filters
    (`by_host`: they split by host, PostgreSQL's), its window starts on a whole hour and a bucket
    is whole hours (an end is never tallied: the rows answer a window with one)."""
    since = query.since
    return (since is not None and since % HOUR_S == 0 and bucket_s % HOUR_S == 0
            and covers(query, by_status=True, by_host=by_host))


def timeline(query: ExecutionQuery, bucket_s: int, *, by_host: bool) -> Sql:
    """Rows (agent, kind, bucket, executions, failures, tokens, cost, costs known) of `query`'s
    window from `query.since` in buckets of `bucket_s`, the buckets with none left out. `by_host`:
    the tallies split by host (PostgreSQL's), so a query of one host may read them."""
    assert query.since is not None, "a timeline starts somewhere"
    if from_tallies(query, bucket_s, by_host=by_host):
        return _tallied(query, bucket_s)
    return _rows(query, bucket_s)


def _agents(query: ExecutionQuery) -> Sql:
    """The agents a timeline reads: `query`'s one, or every one in a seek each (AGENTS_CTE)."""
    if query.agent_name is None:
        return f"WITH RECURSIVE {AGENTS_CTE}, {STATUSES_CTE}, {KINDS_CTE}", []
    return f"WITH agents(name) AS (VALUES (?)), {STATUSES_CTE}, {KINDS_CTE}", [query.agent_name]


# Each agent, kind and status in turn (CROSS JOIN keeps SQLite to that order): one range of the
# key of what follows, the tallies' or the covering index executions_agent_kind_status.
_EACH = "FROM agents CROSS JOIN kinds CROSS JOIN statuses JOIN {} ON agent_name = name AND kind = k AND status = s"


def _tallied(query: ExecutionQuery, bucket_s: int) -> Sql:
    assert query.since is not None
    first_hour, hours = int(query.since) // HOUR_S, bucket_s // HOUR_S
    statuses = query.statuses or ((query.status,) if query.status is not None else ())
    terms, params = ["name IS NOT NULL", "hour >= ?"], [first_hour]
    if statuses:
        terms.append(f"s IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if query.host is not None:
        terms.append("host = ?")
        params.append(query.host)
    agents, agent_params = _agents(query)
    return (f"{agents} SELECT name, k, (hour - ?) / ?, sum(n), "
            f"sum(CASE WHEN s IN ({_FAILED_LIST}) THEN n ELSE 0 END), sum(tokens), sum(cost), sum(costs) "
            f"{_EACH.format('execution_hours')} WHERE {' AND '.join(terms)} GROUP BY 1, 2, 3 ORDER BY 3, 1, 2"), \
        [*agent_params, first_hour, hours, *params]


def _rows(query: ExecutionQuery, bucket_s: int) -> Sql:
    sums = (f"count(*), coalesce(sum(CASE WHEN status IN ({_FAILED_LIST}) THEN 1 ELSE 0 END), 0), "
            "coalesce(sum(tokens_used), 0), coalesce(sum(cost_usd), 0), count(cost_usd)")
    if not query.scope.everything:
        # A scope's streams (its panes', its principal's), each a range of its own index in the
        # window: SQLite's OR of two indexes, far fewer rows than every agent's in the window.
        condition, params = where(query)
        return (f"SELECT agent_name, kind, {ROW_BUCKET}, {sums} FROM executions {condition} "
                f"GROUP BY 1, 2, 3 ORDER BY 3, 1, 2"), [query.since, bucket_s, *params]
    agents, agent_params = _agents(query)
    condition, params = where(msgspec.structs.replace(query, agent_name=None), "name IS NOT NULL")
    return (f"{agents} SELECT name, k, {ROW_BUCKET}, {sums} "
            f"{_EACH.format('executions')} {condition} GROUP BY 1, 2, 3 ORDER BY 3, 1, 2"), \
        [*agent_params, query.since, bucket_s, *params]


def fold(rows: list[tuple[Any, ...]], since: float, bucket_s: int) -> list[TimeBucket]:
    """The buckets of `timeline`'s rows, oldest first (PostgreSQL's sums are numeric: made ints
    and floats here)."""
    return [TimeBucket(agent_name=agent, kind=kind, start=since + int(index) * bucket_s, executions=int(n),
                       failures=int(failed), tokens=int(tokens), cost_usd=float(cost) if int(costs) else None)
            for agent, kind, index, n, failed, tokens, cost, costs in rows if int(n)]
