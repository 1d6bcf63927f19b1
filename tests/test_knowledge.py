"""Knowledge on a real SQLite file and on a real PostgreSQL database (issue 30): learnings become
entries with their 'produced' edges, search ranks and filters them, the digest degrades to nothing
when the full-text index is broken, and the knowledge_stored quota keeps the learnings past it
(never the completion) and counts after the commit."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

import pytest

from muxd.errors import BadRequest
from muxd.store import knowledge, quotas
from muxd.store import task_store as ts
from muxd.store.database import driver_error, is_postgres
from muxd.tasks.model import Learning, Task, Verification

NOW = 1_700_000_000.0
AGENT = "agent:%1"
ENTRIES = [
    "Retry flaky network calls with exponential backoff; the HTTP client retries twice by default.",
    "Network timeouts in CI come from the proxy, not from the client.",
    "Database migrations run when the store opens, keyed on PRAGMA user_version.",
    "The cache must be invalidated when the configuration changes.",
]


@pytest.fixture
def connect_store(connect_either: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
    return connect_either


def matching(c: sqlite3.Connection, word: str) -> list[tuple[str]]:
    """The ids of the entries whose full-text words hold `word`, asked of the database itself."""
    if is_postgres(c):
        return c.execute("SELECT id FROM knowledge_entries WHERE words @@ to_tsquery('english', ?)",
                         (word,)).fetchall()
    return c.execute("SELECT k.id FROM knowledge_fts f JOIN knowledge_entries k ON k.seq = f.rowid "
                     "WHERE knowledge_fts MATCH ?", (word,)).fetchall()


def held_task(c: sqlite3.Connection, title: str = "a task", description: str = "") -> Task:
    task = ts.create_task(c, title=title, description=description, plan=None, priority=500,
                          verification=Verification(), depends_on=[], context={}, created_by="user:me", now=NOW)
    return ts.claim(c, task.id, AGENT, 900, NOW)[0]


def complete(c: sqlite3.Connection, task: Task, learnings: list[Learning], quota: int = 100) -> list[str]:
    return ts.complete(c, task.id, AGENT, output=None, learnings=learnings, knowledge_quota=quota, now=NOW + 1)[1]


def add(c: sqlite3.Connection, content: str, title: str | None = None) -> str:
    return knowledge.add_entry(c, content, title=title, tags=[], source="manual", created_by="user:me", now=NOW).id


def test_learnings_become_entries_produced_by_their_task(store: sqlite3.Connection) -> None:
    task = held_task(store)
    ids = complete(store, task, [Learning(content=ENTRIES[0], title="retries", tags=["http", "ci"]),
                                 Learning(content=ENTRIES[2])])
    entries = knowledge.entries_of_task(store, task.id)
    assert [e.id for e in entries] == ids
    assert (entries[0].title, entries[0].tags, entries[0].source, entries[0].source_task_id, entries[0].created_by,
            entries[0].created_at) == ("retries", ["http", "ci"], "task_completion", task.id, AGENT, NOW + 1)
    assert sorted(store.execute("SELECT knowledge_id, kind FROM task_knowledge WHERE task_id = ?",
                                (task.id,)).fetchall()) == sorted([(ids[0], "produced"), (ids[1], "produced")])
    # Each entry is searchable, tags included.
    assert matching(store, "ci") == [(ids[0],)]
    assert quotas.used(store, AGENT, "knowledge_stored") == 2
    assert ts.task_events(store, task.id)[-1].detail == {"verification": "none", "knowledge": 2}


def test_search_ranks_by_score_and_drops_those_under_min_score(store: sqlite3.Connection) -> None:
    ids = [add(store, content) for content in ENTRIES]
    found = knowledge.search(store, "Why do the network retries fail? Flaky backoff", limit=5, min_score=0.0)
    assert found[0].id == ids[0] and found[0].score == 1.0  # every key term, stemmed ("retries" ~ "retry")
    assert [e.id for e in found] == [ids[0], ids[1]]  # the others share no term
    scores = [e.score or 0.0 for e in found]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert [e.id for e in knowledge.search(store, "network retries flaky backoff", limit=5, min_score=0.5)] == \
        [ids[0]]
    assert knowledge.search(store, "network", limit=1, min_score=0.0)[0].id in ids[:2]
    assert knowledge.search(store, "the and of", limit=5, min_score=0.0) == []
    assert knowledge.search(store, "kubernetes", limit=5, min_score=0.0) == []


def test_the_digest_is_the_top_three_entries_scoring_half_or_more(store: sqlite3.Connection) -> None:
    for n in range(5):
        add(store, f"Flaky network retries, note {n}: retry with backoff.")
    add(store, ENTRIES[3])
    add(store, "Network only.")
    task = held_task(store, "Flaky network retries", "Add backoff to the retry loop")
    digest = knowledge.digest(store, task)
    assert len(digest) == 3 and all((e.score or 0.0) >= 0.5 for e in digest)
    assert all("retr" in e.content for e in digest)
    assert knowledge.digest(store, held_task(store, "Unrelated: kubernetes ingress")) == []


def test_the_digest_degrades_to_nothing_when_search_fails(connect_store: Callable[[], sqlite3.Connection],
                                                          caplog: pytest.LogCaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The warning is sampled per process: this test's other database may have opened its interval.
    monkeypatch.setattr(knowledge._digest_failures, "_window_started", None)
    monkeypatch.setattr(knowledge._digest_failures, "_held", 0)
    store = connect_store()
    add(store, ENTRIES[0])
    task = held_task(store, "flaky network retries")
    assert knowledge.digest(store, task) != []
    # The full-text index broken behind this connection's back.
    index = "words" if is_postgres(store) else "knowledge_fts"
    connect_store().execute("ALTER TABLE knowledge_entries DROP COLUMN words" if is_postgres(store)
                            else "DROP TABLE knowledge_fts")
    with pytest.raises(driver_error(store)):
        knowledge.search(store, task.title, limit=3, min_score=0.0)
    with caplog.at_level(logging.WARNING, logger="muxd.store.knowledge"):
        assert knowledge.digest(store, task) == []
        assert knowledge.digest(store, task) == []
    warnings = [r for r in caplog.records if r.name == "muxd.store.knowledge"]
    assert len(warnings) == 1 and index in warnings[0].getMessage()


def test_text_that_looks_like_fts_syntax_is_only_words(store: sqlite3.Connection) -> None:
    entry = add(store, 'Quote "title:" filters and NEAR(a b) in docs; OR is a word here.')
    for text in ('title:"x" OR NEAR(a b', '"unbalanced * ^start -not', 'AND OR NOT', "content: {title tags}: *"):
        knowledge.search(store, text, limit=5, min_score=0.0)  # no syntax error
    task = held_task(store, 'NEAR(title: "quote" filters', "docs* AND -OR")
    assert [e.id for e in knowledge.digest(store, task, min_score=0.0)] == [entry]


def test_learnings_past_the_quota_are_not_stored_and_the_task_completes(store: sqlite3.Connection) -> None:
    quotas.bump(store, AGENT, "knowledge_stored", 9)
    task = held_task(store)
    completed = ts.complete(store, task.id, AGENT, output=None, knowledge_quota=10, now=NOW + 1,
                            learnings=[Learning(content="one"), Learning(content="two"), Learning(content="three")])
    assert completed.task.state == "done"
    assert [e.content for e in knowledge.entries_of_task(store, task.id)] == ["one"]  # what fits, in order
    assert completed.knowledge_ids == [e.id for e in knowledge.entries_of_task(store, task.id)]
    assert completed.learnings_not_stored == (f"2 of 3 learnings not stored: {AGENT} has stored 9 of its 10 "
                                              f"knowledge entries (the knowledge_stored quota)")
    assert ts.task_events(store, task.id)[-1].detail == {"verification": "none", "knowledge": 1,
                                                         "knowledge_not_stored": 2}
    assert quotas.used(store, AGENT, "knowledge_stored") == 10
    # At the quota: the next task completes with none of its learnings stored, and says so.
    full = ts.complete(store, held_task(store).id, AGENT, output=None, knowledge_quota=10, now=NOW + 2,
                       learnings=[Learning(content="four")])
    assert (full.task.state, full.knowledge_ids) == ("done", [])
    assert full.learnings_not_stored is not None and full.learnings_not_stored.startswith("1 of 1 learnings")
    assert store.execute("SELECT count(*) FROM knowledge_entries").fetchone()[0] == 1
    assert ts.complete(store, held_task(store).id, AGENT, output=None, learnings=[], knowledge_quota=10,
                       now=NOW + 3).learnings_not_stored is None  # nothing given, nothing to say


def test_the_counter_is_bumped_after_the_commit_and_its_failure_undoes_nothing(
        store: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[bool] = []
    real_bump = quotas.bump

    def bump(c: sqlite3.Connection, principal: str, name: str, n: int) -> None:
        seen.append(c.in_transaction)
        real_bump(c, principal, name, n)

    monkeypatch.setattr(quotas, "bump", bump)
    complete(store, held_task(store), [Learning(content="first")])
    assert seen == [False] and quotas.used(store, AGENT, "knowledge_stored") == 1

    def failing_bump(c: sqlite3.Connection, principal: str, name: str, n: int) -> None:
        raise driver_error(c)("database is locked")  # as the driver would: SQLite's, or psycopg's

    monkeypatch.setattr(quotas, "bump", failing_bump)
    task = held_task(store)
    with caplog.at_level(logging.WARNING):
        ids = complete(store, task, [Learning(content="second")])
    assert ts.get_task(store, task.id).state == "done" and len(knowledge.entries_of_task(store, task.id)) == 1
    assert len(ids) == 1 and quotas.used(store, AGENT, "knowledge_stored") == 1  # under-counted, not undone
    assert "database is locked" in caplog.text


def test_no_learnings_never_look_at_the_quota(store: sqlite3.Connection) -> None:
    assert complete(store, held_task(store), [], quota=0) == []


@pytest.mark.parametrize(("content", "tags"), [("  ", []), ("x" * 8001, []), ("ok", [str(n) for n in range(11)])])
def test_an_entry_is_refused_bad_content_or_tags(store: sqlite3.Connection, content: str, tags: list[str]) -> None:
    with pytest.raises(BadRequest):
        knowledge.add_entry(store, content, title=None, tags=tags, source="manual", created_by=None, now=NOW)
    task = held_task(store)
    with pytest.raises(BadRequest):
        complete(store, task, [Learning(content=content, tags=tags)])
    assert ts.get_task(store, task.id).state == "claimed"  # the completion rolled back with it
