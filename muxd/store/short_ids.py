"""Short ids, as git shows hashes: the shortest start of an id's random part that no other id in
the store shares (never under a minimum), and the ids that a short id someone typed names.

A task id is a uuid: its short id is a prefix of it. An execution id is exec_{ms}_{8 hex}: its
leading milliseconds are shared by every run of the same moment, so its short id is a prefix
of the 8 random hex digits at its end (`ab12cd` of exec_1764374102123_ab12cd34), the way
docker shortens container ids. An execution's full-id prefix (`exec_17643…`) is taken too.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence

import msgspec

from muxd.store.database import is_postgres

EXECUTION_TAIL_CHARS = 8     # the random hex of exec_{ms}_{hex} (record.new_execution_id)
_HEX = frozenset("0123456789abcdef")
_AFTER_ID_CHARS = "g"        # sorts after every character of an id (lowercase hex, digits, -, _)


class IdSpace(msgspec.Struct, frozen=True):
    """Where one kind of id lives and which part of it a short id is cut from."""

    table: str
    key: str                 # SQL of the part short ids are cut from (an index serves it)
    tail_chars: int | None   # that part is the id's last `tail_chars` characters; None: the whole id
    min_chars: int           # a short id is never shorter

    def key_of(self, full_id: str) -> str:
        return full_id[-self.tail_chars:] if self.tail_chars else full_id

    def key_on(self, c: object) -> str:
        """`key` as connection `c`'s database says it: PostgreSQL's substr counts no characters
        from the end (its index, pg_schema migration 4, is on right())."""
        return f"right(id, {self.tail_chars})" if self.tail_chars and is_postgres(c) else self.key


TASK_IDS = IdSpace("tasks", "id", None, 8)
EXECUTION_IDS = IdSpace("executions", f"substr(id, -{EXECUTION_TAIL_CHARS})", EXECUTION_TAIL_CHARS, 6)
SHORT_ID_MIN_TYPED_CHARS = 4  # a shorter word is never read as a short id


def shortest_unique(key: str, neighbours: Iterable[str], min_chars: int) -> int:
    """How many leading characters of `key` no neighbour starts with (len(key) + 1 if one equals it)."""
    return max([min_chars, *(len(os.path.commonprefix((key, other))) + 1 for other in neighbours)])


def short_ids(c: sqlite3.Connection, space: IdSpace, ids: Sequence[str], others: Iterable[str] = ()) -> dict[str, str]:
    """The short id of each of `ids`, unique among the ids in `space`'s table and `others` (ids
    not written yet); the whole id where its random part is shared (two tails alike)."""
    extra = [(other, space.key_of(other)) for other in others]
    found: dict[str, str] = {}
    key_sql = space.key_on(c)
    for full_id in dict.fromkeys(ids):
        key = space.key_of(full_id)
        # The nearest keys on either side in sort order share the longest start with this one.
        neighbours = [row[0] for row in c.execute(
            f"SELECT * FROM (SELECT {key_sql} FROM {space.table} WHERE {key_sql} <= ? AND id != ?"
            f" ORDER BY {key_sql} DESC LIMIT 1) below UNION ALL SELECT * FROM (SELECT {key_sql} FROM {space.table}"
            f" WHERE {key_sql} >= ? AND id != ? ORDER BY {key_sql} LIMIT 1) above", (key, full_id, key, full_id))]
        n = shortest_unique(key, [*neighbours, *(k for o, k in extra if o != full_id)], space.min_chars)
        found[full_id] = key[:n] if n <= len(key) else full_id
    return found


def typed_key(space: IdSpace, ref: str) -> tuple[str, str] | None:
    """What a typed `ref` is matched against: ("key", start of the random part) for a short id,
    ("id", start of the whole id) for an execution's full-id prefix; None when it is neither (the
    caller looks it up whole)."""
    ref = ref.strip().lower()
    if space.tail_chars and ref.startswith("exec_"):
        return "id", ref
    longest = space.tail_chars or 36
    if SHORT_ID_MIN_TYPED_CHARS <= len(ref) < longest + (1 if space.tail_chars else 0) and set(ref) <= _HEX | {"-"}:
        return "key", ref
    return None


def ids_starting(c: sqlite3.Connection, space: IdSpace, ref: str, *, limit: int) -> list[str]:
    """Up to `limit` ids that `ref` names (typed_key), in order; [] when `ref` is no short id."""
    typed = typed_key(space, ref)
    if typed is None:
        return []
    column, start = typed
    expression = space.key_on(c) if column == "key" else "id"
    return [str(row[0]) for row in c.execute(
        f"SELECT id FROM {space.table} WHERE {expression} >= ? AND {expression} < ? ORDER BY {expression} LIMIT ?",
        (start, start + _AFTER_ID_CHARS, limit))]
