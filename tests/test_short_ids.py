"""Short ids (store/short_ids.py) on a real migrated store, SQLite's and PostgreSQL's: the shortest
start of each id's random part that no other stored id shares, and the ids a typed short id names."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from muxd.daemon.work.id_refs import only_one
from muxd.errors import BadRequest
from muxd.store.short_ids import EXECUTION_IDS, TASK_IDS, ids_starting, short_ids


def _execution(db: sqlite3.Connection, execution_id: str) -> None:
    db.execute("INSERT INTO executions (id, pane_id, pane_key, agent_name, kind, status, triggered_by, at) "
               "VALUES (?, '%0', 'k', 'a', 'prompt', 'success', 'cli', 0)", (execution_id,))


def _task(db: sqlite3.Connection, task_id: str) -> None:
    db.execute("INSERT INTO tasks (id, title, state, priority, verification, created_at, updated_at) "
               "VALUES (?, 't', 'ready', 500, '{\"kind\": \"none\"}', 0, 0)", (task_id,))


@pytest.fixture
def connect_store(connect_either: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
    return connect_either  # every test here on both databases (an execution's tail: right() there)


IDS = ["exec_1764374102123_ab12cd34", "exec_1764374102124_ab12cd99", "exec_1764374102125_99887766",
       "exec_1764374102126_99887766", "exec_1764374102127_0f0f0f0f"]


def test_an_execution_short_id_is_the_start_of_its_tail_no_other_shares(store: sqlite3.Connection) -> None:
    for execution_id in IDS:
        _execution(store, execution_id)
    short = short_ids(store, EXECUTION_IDS, IDS)
    assert short[IDS[0]] == "ab12cd3" and short[IDS[1]] == "ab12cd9"  # one longer than they share
    assert short[IDS[4]] == "0f0f0f"  # never under six
    assert short[IDS[2]] == IDS[2] and short[IDS[3]] == IDS[3]  # the same tail twice: the whole ids
    # An id not stored yet (a run not written) makes a stored one longer all the same.
    assert short_ids(store, EXECUTION_IDS, [IDS[4]], others=["exec_1_0f0f0f0a"])[IDS[4]] == "0f0f0f0f"


def test_what_a_typed_execution_id_names(store: sqlite3.Connection) -> None:
    for execution_id in IDS:
        _execution(store, execution_id)
    assert ids_starting(store, EXECUTION_IDS, "ab12cd3", limit=5) == [IDS[0]]
    assert ids_starting(store, EXECUTION_IDS, "AB12", limit=5) == IDS[:2]
    assert ids_starting(store, EXECUTION_IDS, "exec_1764374102125", limit=5) == [IDS[2]]
    assert ids_starting(store, EXECUTION_IDS, IDS[3], limit=5) == [IDS[3]]
    assert ids_starting(store, EXECUTION_IDS, "ab1", limit=5) == []  # too short to be read as one
    assert ids_starting(store, EXECUTION_IDS, "nothex", limit=5) == []


def test_task_short_ids_are_prefixes_of_at_least_eight(store: sqlite3.Connection) -> None:
    # (on PostgreSQL ids compare bytewise too)
    tasks = ["3f2a9c1e-0000-4000-8000-000000000001", "3f2a9c1e-7000-4000-8000-000000000002",
             "b0b0b0b0-1111-4000-8000-000000000003"]
    for task_id in tasks:
        _task(store, task_id)
    short = short_ids(store, TASK_IDS, tasks)
    assert short == {tasks[0]: "3f2a9c1e-0", tasks[1]: "3f2a9c1e-7", tasks[2]: "b0b0b0b0"}
    assert ids_starting(store, TASK_IDS, "3f2a", limit=5) == tasks[:2]
    assert ids_starting(store, TASK_IDS, short[tasks[1]], limit=5) == [tasks[1]]


def test_an_ambiguous_id_is_one_line_naming_the_candidates() -> None:
    with pytest.raises(BadRequest) as caught:
        only_one("execution", "ab12", IDS, "execution_id")
    assert caught.value.message == ("execution ab12 is ambiguous: " + ", ".join(IDS[:4]) + " and 1 more")
    assert only_one("execution", "ab12cd3", IDS[:1], "execution_id") == IDS[0]
    assert only_one("execution", "ffff", [], "execution_id") is None
