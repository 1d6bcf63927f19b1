"""Knowledge entries (the learnings of completed tasks, and entries added by hand) and their
full-text search.

Each entry is a knowledge_entries row plus a knowledge_fts row of the same rowid (FTS5, porter
stemming), written in the same transaction. A search ranks candidates by FTS5's bm25, then scores
them with muxd/tasks/relevance.py; which of the query's terms an entry contains is asked of FTS5
itself, one MATCH per term over the candidates, so a term matches exactly as the search did
(stemmed by the same tokenizer: "caching" finds "cached"), with no second stemmer in Python.

On PostgreSQL (issue 30) the entry's stemmed words are a column PostgreSQL keeps (`words`, English
stemming), ranked by ts_rank: higher is better where bm25's lower is, and relevance.score, which
divides a rank by the best one, means the same on either.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from typing import Any

import msgspec

from muxd.config import (KNOWLEDGE_DIGEST_FAILURE_LOG_INTERVAL_S, KNOWLEDGE_DIGEST_MIN_SCORE, KNOWLEDGE_DIGEST_TOP,
                         KNOWLEDGE_SEARCH_LIMIT_MAX, KNOWLEDGE_TAGS_MAX, KNOWLEDGE_TEXT_MAX_CHARS)
from muxd.errors import BadRequest
from muxd.sampled_log import SampledLog
from muxd.store.database import is_postgres, transaction
from muxd.store.hosts import HOST_SQL
from muxd.tasks.model import KnowledgeEntry, Learning, Task, new_id
from muxd.tasks.relevance import fts_query, key_terms, score

log = logging.getLogger(__name__)
# A search reads this many candidates per entry it may return, before scoring them.
CANDIDATES_PER_RESULT = 4
TASK_COMPLETION = "task_completion"  # the source of a learning's entry

_COLUMNS = "seq, id, title, content, tags, source, source_task_id, created_by, created_at"
_tags = msgspec.json.Decoder(list[str])
_digest_failures = SampledLog(log, logging.WARNING, "knowledge digest failed; tasks are answered without it",
                              interval_s=KNOWLEDGE_DIGEST_FAILURE_LOG_INTERVAL_S)


def _tsquery(terms: list[str]) -> str:
    """A to_tsquery text for any of `terms`: key_terms' words are letters and digits alone, never
    an operator."""
    return " | ".join(terms)


# (the candidates and their ranks, best first; the candidates matching a query, before ` IN (…)`;
# the query of terms) for each database.
_FTS5_SEARCH = ("SELECT rowid, bm25(knowledge_fts) FROM knowledge_fts WHERE knowledge_fts MATCH ? "
                "ORDER BY bm25(knowledge_fts) LIMIT ?",
                "SELECT rowid FROM knowledge_fts WHERE knowledge_fts MATCH ? AND rowid", fts_query)
_PG_SEARCH = ("SELECT seq, ts_rank(words, q) FROM knowledge_entries, to_tsquery('english', ?) q WHERE words @@ q "
              "ORDER BY 2 DESC, seq LIMIT ?",
              "SELECT seq FROM knowledge_entries WHERE words @@ to_tsquery('english', ?) AND seq", _tsquery)


def _entry(row: tuple[Any, ...]) -> KnowledgeEntry:
    _seq, id_, title, content, tags, source, source_task_id, created_by, created_at = row
    return KnowledgeEntry(id=id_, title=title, content=content, tags=_tags.decode(tags) if tags else [],
                          source=source, source_task_id=source_task_id, created_by=created_by, created_at=created_at)


def _insert(c: sqlite3.Connection, entry: KnowledgeEntry) -> None:
    if not entry.content.strip():
        raise BadRequest("a knowledge entry needs content", field="content")
    if len(entry.content) > KNOWLEDGE_TEXT_MAX_CHARS:
        raise BadRequest(f"a knowledge entry is at most {KNOWLEDGE_TEXT_MAX_CHARS} characters", field="content")
    if len(entry.tags) > KNOWLEDGE_TAGS_MAX:
        raise BadRequest(f"a knowledge entry has at most {KNOWLEDGE_TAGS_MAX} tags", field="tags")
    inserted = c.execute(
        f"INSERT INTO knowledge_entries ({_COLUMNS.removeprefix('seq, ')}, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {HOST_SQL})",
        (entry.id, entry.title, entry.content, msgspec.json.encode(entry.tags).decode() if entry.tags else None,
         entry.source, entry.source_task_id, entry.created_by, entry.created_at))
    if not is_postgres(c):  # PostgreSQL keeps the words with the row itself
        c.execute("INSERT INTO knowledge_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?)",
                  (inserted.lastrowid, entry.title or "", entry.content, " ".join(entry.tags)))


def store_learnings(c: sqlite3.Connection, learnings: list[Learning], *, task_id: str, created_by: str,
                    now: float) -> list[str]:
    """Each learning as an entry with a 'produced' edge from the task, in the caller's
    transaction; returns the entries' ids."""
    ids: list[str] = []
    for learning in learnings:
        entry = KnowledgeEntry(id=new_id(), content=learning.content, title=learning.title, tags=learning.tags,
                               source=TASK_COMPLETION, source_task_id=task_id, created_by=created_by, created_at=now)
        _insert(c, entry)
        c.execute("INSERT INTO task_knowledge (task_id, knowledge_id, kind) VALUES (?, ?, 'produced')",
                  (task_id, entry.id))
        ids.append(entry.id)
    return ids


def add_entry(c: sqlite3.Connection, content: str, *, title: str | None, tags: list[str], source: str,
              created_by: str | None, now: float) -> KnowledgeEntry:
    """A new entry that no task produced (`muxd knowledge add`)."""
    entry = KnowledgeEntry(id=new_id(), content=content, title=title, tags=tags, source=source,
                           created_by=created_by, created_at=now)
    with transaction(c, immediate=True):
        _insert(c, entry)
    return entry


def entries_of_task(c: sqlite3.Connection, task_id: str) -> list[KnowledgeEntry]:
    """The entries the task's learnings became, in the order given."""
    return [_entry(row) for row in c.execute(
        f"SELECT {', '.join('k.' + column for column in _COLUMNS.split(', '))} FROM task_knowledge tk "
        f"JOIN knowledge_entries k ON k.id = tk.knowledge_id "
        f"WHERE tk.task_id = ? AND tk.kind = 'produced' ORDER BY k.seq", (task_id,))]


def search(c: sqlite3.Connection, text: str, *, limit: int, min_score: float) -> list[KnowledgeEntry]:
    """Up to `limit` entries relevant to `text` with a score of at least `min_score`, the most
    relevant first. sqlite3.Error when the search cannot run.

    Reads only, with no transaction of its own (callers may hold one): its statements need no
    shared snapshot, as every later one is confined to the candidates the first one found."""
    if not 1 <= limit <= KNOWLEDGE_SEARCH_LIMIT_MAX:
        raise BadRequest(f"limit must be from 1 to {KNOWLEDGE_SEARCH_LIMIT_MAX}", field="limit")
    terms = key_terms(text)
    if not terms:
        return []
    ranked, matching, query = _PG_SEARCH if is_postgres(c) else _FTS5_SEARCH
    hits: list[tuple[int, float]] = c.execute(ranked, (query(terms), limit * CANDIDATES_PER_RESULT)).fetchall()
    if not hits:
        return []
    candidates = [rowid for rowid, _ in hits]
    among = f" IN ({', '.join('?' * len(candidates))})"
    matched: Counter[int] = Counter()
    for term in terms:
        matched.update(rowid for (rowid,) in c.execute(matching + among, (query([term]), *candidates)))
    best = hits[0][1]
    scores = {rowid: score(bm25, best, matched[rowid], len(terms)) for rowid, bm25 in hits}
    kept = [rowid for rowid in candidates if scores[rowid] >= min_score]
    if not kept:
        return []
    rows = {row[0]: row for row in c.execute(
        f"SELECT {_COLUMNS} FROM knowledge_entries WHERE seq IN ({', '.join('?' * len(kept))})", kept)}
    found = [msgspec.structs.replace(_entry(rows[rowid]), score=scores[rowid]) for rowid in kept if rowid in rows]
    found.sort(key=lambda entry: -(entry.score or 0.0))  # stable: equal scores keep bm25's order
    return found[:limit]


def digest(c: sqlite3.Connection, task: Task, *, top: int = KNOWLEDGE_DIGEST_TOP,
           min_score: float = KNOWLEDGE_DIGEST_MIN_SCORE) -> list[KnowledgeEntry]:
    """The entries most relevant to the task's title and description; [] when the search fails
    (seed 001: a task is still worth returning without its knowledge)."""
    return digest_or_none(c, task, top=top, min_score=min_score) or []


def digest_or_none(c: sqlite3.Connection, task: Task, *, top: int = KNOWLEDGE_DIGEST_TOP,
                   min_score: float = KNOWLEDGE_DIGEST_MIN_SCORE) -> list[KnowledgeEntry] | None:
    """`digest`, with None when the search failed (logged, sampled), so a caller can say so."""
    try:
        return search(c, f"{task.title}\n{task.description}", limit=top, min_score=min_score)
    except Exception as exc:  # noqa: BLE001 — any failure degrades the digest, never the answer
        _digest_failures.event(f": task {task.id}: {' '.join(str(exc).split()) or type(exc).__name__}")
        return None
