"""The SQL of the history's reads, shaped so SQLite answers each from an index at a million rows
(benchmarks/bench_history_queries.py measures them).

Three shapes recur. A *loose index scan* (a recursive CTE stepping from one distinct value to
the next) lists the distinct agents or failure fingerprints in a few seeks instead of reading
every row. *Correlated subqueries* per agent or fingerprint then read only that slice of a
covering index, which also spares the sort a GROUP BY would need. A *scoped page* merges the
newest rows of each scope stream (its panes, its principal) instead of sorting all it may see.
"""

from __future__ import annotations

import json
from typing import Any

from msgspec.structs import replace

from muxd.executions.record import ENDED_STATUSES, FAILED_STATUSES, KINDS, STATUSES
from muxd.store.execution_rows import FAILED_ROWS, READ_COLUMNS
from muxd.store.execution_store import AgentStats, ExecutionQuery, Scope

# NULLS LAST: SQLite's order for DESC, said so that PostgreSQL (NULLs first there) sorts the same;
# SQLite still reads it from the index.
NEWEST_FIRST = "ORDER BY at DESC NULLS LAST, seq DESC"
FAILURES = "executions INDEXED BY executions_failures"
_FINGERPRINTS = (  # every stack_hash that has failures, in a seek each
    f"WITH RECURSIVE hashes(h) AS ("
    f"SELECT (SELECT min(stack_hash) FROM {FAILURES} WHERE {FAILED_ROWS}) UNION ALL "
    f"SELECT (SELECT min(stack_hash) FROM {FAILURES} WHERE {FAILED_ROWS} AND stack_hash > h) "
    f"FROM hashes WHERE h IS NOT NULL)")
AGENTS_CTE = (
    "agents(name) AS (SELECT (SELECT min(agent_name) FROM executions) UNION ALL "
    "SELECT (SELECT min(agent_name) FROM executions WHERE agent_name > name) FROM agents WHERE name IS NOT NULL)")
STATUSES_CTE = "statuses(s) AS (VALUES " + ", ".join(f"('{status}')" for status in STATUSES) + ")"
KINDS_CTE = "kinds(k) AS (VALUES " + ", ".join(f"('{kind}')" for kind in KINDS) + ")"
# The sums `stats` packs as JSON, from the rows in scope (coalesce(sum(…), 0): SQLite's total(), said
# as PostgreSQL says it too).
SUMS = ("count(*), coalesce(sum(cost_usd), 0), coalesce(sum(tokens_used), 0), coalesce(sum(duration_ms), 0), "
        "count(duration_ms), count(cost_usd)")
# A scope's panes: one JSON parameter, not one per pane (a token may hold more panes than SQLite has variables).
PANES_TERM = "pane_key IN (SELECT value FROM json_each(?))"
_FILTERED = ("agent_name", "pane_key", "status", "triggered_by", "task_id", "trace_id", "host")
Sql = tuple[str, list[Any]]


def sees_nothing(scope: Scope) -> bool:
    """No row is visible to `scope` (callers answer at once: SQLite refuses INDEXED BY on a
    WHERE it can prove false)."""
    return scope.pane_keys is not None and not scope.pane_keys and not scope.principals


def scope_terms(scope: Scope) -> list[Sql]:
    """One term per way a row can be visible to `scope` (any of them suffices); [] for everything,
    ["false"] for nothing."""
    if scope.pane_keys is None:
        return []
    terms: list[Sql] = []
    if scope.pane_keys:
        terms.append((PANES_TERM, [json.dumps(sorted(scope.pane_keys))]))
    if scope.principals:
        terms.append((f"principal IN ({', '.join('?' * len(scope.principals))})", list(scope.principals)))
    return terms or [("false", [])]


def visible(scope: Scope) -> Sql:
    """A single term for the rows `scope` may see ("" when it sees everything)."""
    terms = scope_terms(scope)
    if not terms:
        return "", []
    return f"({' OR '.join(sql for sql, _ in terms)})", [p for _, params in terms for p in params]


def filters(query: ExecutionQuery) -> Sql:
    """`query`'s filters but its scope, as terms joined by AND ("" for none)."""
    terms, params = [], []
    for column in _FILTERED:
        value = getattr(query, column)
        if value is not None:
            terms.append(f"{column} = ?")
            params.append(value)
    if query.statuses:
        terms.append(f"status IN ({', '.join('?' * len(query.statuses))})")
        params.extend(query.statuses)
    for column_test, value in (("at >= ?", query.since), ("at < ?", query.until)):
        if value is not None:
            terms.append(column_test)
            params.append(value)
    return " AND ".join(terms), params


def where(query: ExecutionQuery, *extra: str) -> Sql:
    """`WHERE …` for `query` (scope and filters, not limit/offset) and the `extra` terms, or ""."""
    scope_sql, scope_params = visible(query.scope)
    filter_sql, filter_params = filters(query)
    terms = [term for term in (*extra, scope_sql, filter_sql) if term]
    return (f"WHERE {' AND '.join(terms)}" if terms else ""), [*scope_params, *filter_params]


def _and(sql: str) -> str:
    return f" AND {sql}" if sql else ""


def page(query: ExecutionQuery, *, postgres: bool = False) -> Sql:
    """The rows of `query`'s page, newest first. `postgres`: a scope's panes are read a pane at a
    time (LATERAL), each from its own stretch of executions_pane_at: PostgreSQL reads an array of
    panes as one unordered range, and with a LIMIT it would rather walk every execution backwards
    looking for the panes' (a token of an old daemon run's panes: ~250 ms at 1M rows)."""
    terms = scope_terms(query.scope)
    per_pane = postgres and bool(query.scope.pane_keys)
    if len(terms) < 2 and len(query.statuses) < 2 and not per_pane:
        sql, params = where(query)
        return f"SELECT {READ_COLUMNS} FROM executions {sql} {NEWEST_FIRST} LIMIT ? OFFSET ?", \
            [*params, query.limit, query.offset]
    # Pane rows OR principal rows, or any of several statuses (the failure family), would make
    # SQLite collect and sort every row that matches: take the newest rows of each stream (a
    # scope term, a status) from its own index and merge those instead.
    filter_sql, filter_params = filters(replace(query, statuses=()))
    enough = query.limit + query.offset
    streams, params = [], []
    for term, term_params in terms or [("", [])]:
        for status in query.statuses or (None,):
            lateral = per_pane and term == PANES_TERM
            conditions = " AND ".join(c for c in ("pane_key = k.value" if lateral else term,
                                                  "status = ?" if status else "", filter_sql) if c)
            rows = f"SELECT seq, at FROM executions WHERE {conditions or 'true'} {NEWEST_FIRST} LIMIT ?"
            streams.append(f"SELECT s.* FROM json_each(?) k, LATERAL ({rows}) s" if lateral
                           else f"SELECT * FROM ({rows}) stream")
            params += [*term_params, *([status] if status else []), *filter_params, enough]
    # The page is picked among the streams' (seq, at) alone (UNION: a row two scope terms see
    # counts once); only its rows are read whole.
    return (f"SELECT {READ_COLUMNS} FROM executions WHERE seq IN (SELECT seq FROM "
            f"({' UNION '.join(streams)}) streams {NEWEST_FIRST} LIMIT ? OFFSET ?) {NEWEST_FIRST}"), \
        [*params, query.limit, query.offset]


def count(query: ExecutionQuery, *, postgres: bool = False) -> Sql:
    """How many rows match `query`. `postgres`: a scope of panes and a principal is counted as the
    union of each term's row ids, which PostgreSQL reads from their indexes alone (1M rows: ~40 ms),
    where the OR of the terms makes it fetch every matching row (~470 ms); SQLite's plan for the
    OR counts from the indexes already."""
    terms = scope_terms(query.scope)
    if postgres and len(terms) > 1:
        filter_sql, filter_params = filters(query)
        streams = [f"SELECT seq FROM executions WHERE {term}{_and(filter_sql)}" for term, _ in terms]
        return (f"SELECT count(*) FROM ({' UNION '.join(streams)}) visible",
                [p for _, term_params in terms for p in (*term_params, *filter_params)])
    sql, params = where(query)
    return f"SELECT count(*) FROM executions {sql}", params


def _index_only(query: ExecutionQuery) -> bool:
    """Whether the index of failures alone tells which failures match `query` (fingerprint,
    time, status): then each fingerprint's slice is read in seeks, else the rows are read once."""
    return query.scope.everything and all(getattr(query, column) is None for column in _FILTERED if column != "status")


def _per_fingerprint(query: ExecutionQuery) -> tuple[str, list[Any]]:
    """The terms that pick one fingerprint's failures matching `query` (`h`: the fingerprint)."""
    sql, params = where(query, FAILED_ROWS, "stack_hash = h")
    return f"FROM {FAILURES} {sql}", params


def _scope_patterns(query: ExecutionQuery, *, postgres: bool) -> Sql | None:
    """`WITH … patterns(h, n, first_seen, newest)` for a scoped query of failures filtered at most
    by status and time (SQLite's; else None): each scope term's failures from its own index of
    failures (schema migration 11: by pane or principal, then fingerprint and time, holding the
    status, and the principal's the pane, so that a row two terms see is counted once), counted
    per fingerprint in the index's order; then each fingerprint's newest in a seek per term, its
    newest time known. No failure is read twice nor sorted (reading them all and grouping: ~30 ms
    for a token at 1M rows, on a loaded machine 50-190 ms)."""
    if postgres or query.scope.everything or any(getattr(query, column) is not None
                                                for column in _FILTERED if column != "status"):
        return None
    filter_sql, filter_params = filters(query)  # statuses and times: in the indexes too
    counted, newest, params, before = [], [], list[Any](), list[Sql]()
    for term, term_params in scope_terms(query.scope):
        column, index = (("pane_key", "executions_failures_pane") if term.startswith("pane_key")
                         else ("principal", "executions_failures_principal"))
        unseen = [f"NOT coalesce({seen}, false)" for seen, _ in before]  # a row an earlier term sees
        conditions = " AND ".join(t for t in (FAILED_ROWS, term, *unseen, filter_sql) if t)
        rows = f"FROM executions INDEXED BY {index} WHERE {conditions}"
        counted.append(f"SELECT stack_hash AS h, count(*) AS n, min(at) AS first_seen, max(at) AS last {rows} "
                       f"GROUP BY {column}, stack_hash")
        # `at IS g.last`: a fingerprint whose failures all lack a time has none as its newest's.
        newest.append(f"SELECT seq {rows} AND stack_hash = g.h AND at IS g.last")
        params += [*term_params, *(p for _, seen in before for p in seen), *filter_params]
        before.append((term, term_params))
    return (f"WITH counted AS ({' UNION ALL '.join(counted)}), patterns AS MATERIALIZED (SELECT h, n, first_seen, "
            f"(SELECT max(seq) FROM ({' UNION ALL '.join(newest)}) newest) AS newest FROM (SELECT h, sum(n) AS n, "
            f"min(first_seen) AS first_seen, max(last) AS last FROM counted GROUP BY h) g)"), [*params, *params]


def _matching_failures(query: ExecutionQuery) -> Sql:
    """`WITH failures(seq, at, h)`: the failures matching `query`, read once through the index
    its filters pick (a task's, an agent's; a scope's panes and principal each from its index of
    failures): a slice per fingerprint would read every failure's row once per question."""
    filter_sql, filter_params = filters(query)
    streams: list[Sql] = []
    for term, term_params in scope_terms(query.scope) or [("", [])]:
        index = (" INDEXED BY executions_failures_pane" if term.startswith("pane_key") else
                 " INDEXED BY executions_failures_principal" if term.startswith("principal") else "")
        conditions = " AND ".join(c for c in (FAILED_ROWS, term, filter_sql) if c)
        streams.append((f"SELECT seq, at, stack_hash FROM executions{index} WHERE {conditions}",
                        [*term_params, *filter_params]))
    return (f"WITH failures(seq, at, h) AS MATERIALIZED ({' UNION '.join(sql for sql, _ in streams)})",
            [p for _, params in streams for p in params])


_NEWEST_OF_H = "(SELECT seq FROM failures f WHERE f.h = g.h ORDER BY f.at DESC NULLS LAST, f.seq DESC LIMIT 1)"


def error_patterns(query: ExecutionQuery, *, postgres: bool = False) -> Sql:
    """Rows (stack_hash, count, first_seen, last_seen, id, task_id, trace_id, message, type) of
    the newest failure of each fingerprint, the most recent first."""
    last = (f"SELECT h, n, first_seen, at, id, task_id, trace_id, error_message, error_type "
            f"FROM patterns JOIN executions ON seq = newest {NEWEST_FIRST} LIMIT ? OFFSET ?")
    scoped = _scope_patterns(query, postgres=postgres)
    if scoped is not None:
        patterns, params = scoped
        return f"{patterns} {last}", [*params, query.limit, query.offset]
    if not _index_only(query):
        failures, params = _matching_failures(query)
        return (f"{failures}, patterns AS (SELECT h, count(*) AS n, min(at) AS first_seen, {_NEWEST_OF_H} AS newest "
                f"FROM failures g GROUP BY h) {last}"), [*params, query.limit, query.offset]
    rows, params = _per_fingerprint(query)
    return (f"{_FINGERPRINTS}, patterns AS (SELECT h, (SELECT count(*) {rows}) AS n, "
            f"(SELECT min(at) {rows}) AS first_seen, (SELECT seq {rows} {NEWEST_FIRST} LIMIT 1) AS newest "
            f"FROM hashes WHERE h IS NOT NULL) {last}"), \
        [*params, *params, *params, query.limit, query.offset]


def unique_failures(query: ExecutionQuery, *, postgres: bool = False) -> Sql:
    """The newest failure of each fingerprint matching `query`, newest first."""
    newest_first = f"{NEWEST_FIRST} LIMIT ? OFFSET ?"
    scoped = _scope_patterns(query, postgres=postgres)
    if scoped is not None:
        patterns, params = scoped
        return (f"{patterns} SELECT {READ_COLUMNS} FROM executions WHERE seq IN (SELECT newest FROM patterns) "
                f"{newest_first}", [*params, query.limit, query.offset])
    if not _index_only(query):
        failures, params = _matching_failures(query)
        return (f"{failures} SELECT {READ_COLUMNS} FROM executions WHERE seq IN "
                f"(SELECT {_NEWEST_OF_H} FROM (SELECT DISTINCT h FROM failures) g) {newest_first}"), \
            [*params, query.limit, query.offset]
    rows, params = _per_fingerprint(query)
    return (f"{_FINGERPRINTS} SELECT {READ_COLUMNS} FROM executions WHERE seq IN "
            f"(SELECT (SELECT seq {rows} {NEWEST_FIRST} LIMIT 1) FROM hashes WHERE h IS NOT NULL) {newest_first}"), \
        [*params, query.limit, query.offset]


def stats(query: ExecutionQuery) -> Sql:
    """Rows (agent, kind, status, JSON [count, cost, tokens, duration ms, durations, costs known],
    last at, newest agent type) for each agent, kind and status, each read from its slice of the
    covering index executions_agent_kind_status (the sums travel as JSON: a scalar subquery has
    one column; `at` does not, JSON would round it)."""
    sql, params = where(query, "agent_name = name", "kind = k", "status = s")
    if query.agent_name is None:
        agents, agent_params = f"WITH RECURSIVE {AGENTS_CTE}", []
    else:
        agents, agent_params = "WITH agents(name) AS (VALUES (?))", [query.agent_name]
    return (f"{agents}, {STATUSES_CTE}, {KINDS_CTE} SELECT name, k, s, (SELECT json_array({SUMS}) FROM executions {sql}), "
            f"(SELECT max(at) FROM executions {sql}), "
            f"(SELECT agent_type FROM executions {sql} ORDER BY at DESC NULLS LAST LIMIT 1) "
            f"FROM agents CROSS JOIN kinds CROSS JOIN statuses WHERE name IS NOT NULL"), \
        [*agent_params, *params, *params, *params]


def fold_stats(rows: list[tuple[str, str, str, str, float | None, str | None]]) -> list[AgentStats]:
    """AgentStats per agent and kind (by name, prompts first) from the rows of `stats`; those
    with no rows left out."""
    folds: dict[tuple[str, str], dict[str, Any]] = {}
    for agent, kind, status, packed, last_at, agent_type in rows:
        n, cost, tokens, duration_ms, durations, costs_known = json.loads(packed)
        if not n:
            continue
        fold = folds.setdefault((agent, kind), {"total": 0, "by_status": {}, "cost": 0.0, "costs_known": 0,
                                                "tokens": 0.0, "duration_ms": 0.0, "durations": 0,
                                                "last": (None, None, None)})
        fold["total"] += n
        fold["by_status"][status] = n
        fold["cost"] += cost
        fold["costs_known"] += costs_known
        fold["tokens"] += tokens
        if status in ENDED_STATUSES:
            fold["duration_ms"] += duration_ms
            fold["durations"] += durations
        if last_at is not None and (fold["last"][0] is None or last_at > fold["last"][0]):
            fold["last"] = (last_at, status, agent_type)
    result = []
    for agent, kind in sorted(folds, key=lambda key: (key[0], KINDS.index(key[1]))):
        fold = folds[agent, kind]
        counts = fold["by_status"]
        result.append(AgentStats(
            agent_name=agent, kind=kind, agent_type=fold["last"][2], total=fold["total"],
            successful=counts.get("success", 0), failed=sum(counts.get(s, 0) for s in FAILED_STATUSES),
            cancelled=counts.get("cancelled", 0), running=counts.get("running", 0),
            pending=counts.get("pending", 0), total_tokens=int(fold["tokens"]),
            total_cost_usd=fold["cost"] if fold["costs_known"] else None, cost_known_executions=fold["costs_known"],
            avg_duration_s=fold["duration_ms"] / fold["durations"] / 1000 if fold["durations"] else None,
            last_execution_at=fold["last"][0], last_execution_status=fold["last"][1]))
    return result
