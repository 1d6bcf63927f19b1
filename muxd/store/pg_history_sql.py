"""The history's read SQL as PostgreSQL reads it (MUXD_DB=postgresql://…, issue 30).

execution_queries.py and execution_tallies.py build one text, shaped for SQLite's planner and
written in what both databases share where a word differs only in spelling (NULLS LAST, `true`,
coalesce(sum(…), 0)). What remains SQLite's own is rewritten here, one rule per construct, so
the builders keep one copy of the queries' logic:

- `INDEXED BY` (SQLite's partial indexes are used only when named; PostgreSQL's planner proves
  the implication itself and has no such clause);
- a scope's panes as one JSON parameter (`json_each`): an array of jsonb_array_elements_text, which
  (unlike `IN (SELECT …)`) an index scan takes, so the OR of a scope's terms is one of two indexes;
  the panes a page reads one at a time (`json_each(?) k, LATERAL`), as a set of rows;
- the JSON that packs stats' sums: json_build_array (json renders a whole numeric as an integer);
- the tallies' hour of a row, and its bucket in a timeline: floor, as SQLite's CAST truncates
  (PostgreSQL's would round).
"""

from __future__ import annotations

import re
from functools import lru_cache

from muxd.store.execution_tallies import BUCKET
from muxd.store.execution_timeline import ROW_BUCKET

_STATEMENTS_CACHED = 256
RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r" INDEXED BY \w+", ""),
    (r"(\w+) IN \(SELECT value FROM json_each\(\?\)\)", r"\1 = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))"),
    (r"\bjson_each\(\?\) k\b", "jsonb_array_elements_text(?::jsonb) k(value)"),
    (r"\bjson_array\(", "json_build_array("),
    (re.escape(BUCKET), "floor(at / 3600)::bigint"),
    (re.escape(ROW_BUCKET), "floor((at - ?) / ?)::bigint"),
))


@lru_cache(maxsize=_STATEMENTS_CACHED)
def postgres_text(sql: str) -> str:
    """`sql`, one of the history's statements, with SQLite's own constructs in PostgreSQL's words."""
    for pattern, replacement in RULES:
        sql = pattern.sub(replacement, sql)
    return sql
