"""The history over time (issue 31's charts): executions, failures, tokens and cost per agent,
kind and time bucket, in one grouped query.

Three shapes. A window the timeline's tallies tile (schema migration 10: per span of 15 minutes,
an hour, 6 hours or a UTC day, agent and kind; everything in scope, filtered at most by agent and
host, a start on a bucket of the span and buckets of whole ones) sums one range of their key:
~20 rows a bucket, whatever the window. One with a status filter on whole hours sums the hourly
tallies of each agent, kind and status (one range each, found by the same loose index scan of
the agents as `stats`). Any other (a start on no span, an end) groups the rows themselves, each
agent, kind and status a range of the covering index executions_agent_kind_status; a scoped
token's, the rows of its panes and of its principal, each a range of its own covering index
(executions_pane_sums, executions_principal_sums). Never a row outside the window. At 1M rows
over 30 days (benchmarks/bench_history_queries.py, p50/p95 on a loaded 2-core machine, before
the spans → with them): a day by hour 10.9/26.9 → 1.2/1.6 ms, 6 h by 15 minutes 29.7/44.4 →
1.2/1.3 ms, 30 days by day 155/270 → 1.5/1.6 ms, 7 days by 6 h 1.5/6.6 ms, a token's day
17.6/53.2 → 1.9/14.9 ms.
"""

from __future__ import annotations

from typing import Any

import msgspec

from muxd.executions.record import FAILED_STATUSES
from muxd.store.execution_queries import AGENTS_CTE, KINDS_CTE, STATUSES_CTE, Sql, filters, scope_terms, where
from muxd.store.execution_store import ExecutionQuery, TimeBucket
from muxd.store.execution_tallies import HOUR_S, covers

# A row's bucket, counted from the window's start (a parameter) in buckets of a parameter's
# seconds; pg_history_sql.py says it as floor(), as PostgreSQL's CAST would round.
ROW_BUCKET = "CAST((at - ?) / ? AS INTEGER)"
_FAILED_LIST = ", ".join(f"'{status}'" for status in FAILED_STATUSES)
# The spans of the timeline's tallies (schema migration 10, which names them in its text), longest first.
SPANS_S = (86_400, 21_600, 3600, 900)


def tallied_span(query: ExecutionQuery, bucket_s: int, *, by_host: bool) -> int | None:
    """The longest span of the timeline's tallies that tiles `query`'s window in buckets of
    `bucket_s` (its start on a bucket of the span, a bucket whole ones) if they cover its filters
    (an agent; a host with `by_host`: PostgreSQL's split by host; never a status), else None."""
    since = query.since
    if since is None or since < 0 or not covers(query, by_host=by_host):
        return None
    return next((span for span in SPANS_S if since % span == 0 and bucket_s % span == 0), None)


def from_tallies(query: ExecutionQuery, bucket_s: int, *, by_host: bool) -> bool:
    """Whether tallies answer `query` in buckets of `bucket_s`: the timeline's, or the hourly ones
    when they cover its filters (a status too), its window starts on a whole hour and a bucket is
    whole hours (an end is never tallied: the rows answer a window with one)."""
    since = query.since
    return tallied_span(query, bucket_s, by_host=by_host) is not None or (
        since is not None and since % HOUR_S == 0 and bucket_s % HOUR_S == 0
        and covers(query, by_status=True, by_host=by_host))


def timeline(query: ExecutionQuery, bucket_s: int, *, by_host: bool) -> Sql:
    """Rows (agent, kind, bucket, executions, failures, tokens, cost, costs known) of `query`'s
    window from `query.since` in buckets of `bucket_s`, the buckets with none left out. `by_host`:
    the tallies split by host (PostgreSQL's), so a query of one host may read them."""
    assert query.since is not None, "a timeline starts somewhere"
    span = tallied_span(query, bucket_s, by_host=by_host)
    if span is not None:
        return _spans(query, bucket_s, span)
    if from_tallies(query, bucket_s, by_host=by_host):
        return _tallied(query, bucket_s)
    return _rows(query, bucket_s)


def _spans(query: ExecutionQuery, bucket_s: int, span: int) -> Sql:
    """From the timeline's tallies: the span's buckets from the window's start, one range of
    their key (~20 rows a bucket: an agent's, a kind's), in buckets of `bucket_s`."""
    assert query.since is not None
    first = int(query.since) // span
    terms, params = ["span = ?", "bucket >= ?"], [span, first]
    for column in ("agent_name", "host"):
        if getattr(query, column) is not None:
            terms.append(f"{column} = ?")
            params.append(getattr(query, column))
    return (f"SELECT agent_name, kind, (bucket - ?) / ?, sum(n), sum(failures), sum(tokens), sum(cost), sum(costs) "
            f"FROM execution_spans WHERE {' AND '.join(terms)} GROUP BY 1, 2, 3 ORDER BY 3, 1, 2"), \
        [first, bucket_s // span, *params]


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
        # A scope's streams (its panes', its principal's), each a range of its own covering index
        # in the window (executions_pane_sums, executions_principal_sums: no row read), a stream
        # without the rows of those before it (a row both see counts once).
        filter_sql, filter_params = filters(query)
        streams, params, before = [], [], list[Sql]()
        for term, term_params in scope_terms(query.scope):
            terms = [term, *(f"NOT coalesce({seen}, false)" for seen, _ in before), filter_sql]
            streams.append(f"SELECT agent_name, kind, {ROW_BUCKET} AS b, status, tokens_used, cost_usd "
                           f"FROM executions WHERE {' AND '.join(t for t in terms if t)}")
            params += [query.since, bucket_s, *term_params, *(p for _, seen in before for p in seen), *filter_params]
            before.append((term, term_params))
        return (f"SELECT agent_name, kind, b, {sums} FROM ({' UNION ALL '.join(streams)}) streams "
                f"GROUP BY 1, 2, 3 ORDER BY 3, 1, 2"), params
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
