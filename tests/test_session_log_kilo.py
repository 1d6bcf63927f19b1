"""Kilo's session store: the rows Kilo 7.7.9 wrote into kilo.db in two `kilo run`s against the
fake Chat Completions API (tests/session_log_data/kilo.rows.json: its session, message and
part rows), put back into a database with Kilo's columns; found from a process's /proc entries
and read turn by turn from a cursor's mark; never a database that is a link."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_session_log_locate import LIFETIME, named, processes, start  # noqa: F401 (a fixture)

from muxd.executions.session_logs import agent_of_log, locate
from muxd.executions.session_logs.store_cursor import SessionStoreCursor, cursor_for

DATA = Path(__file__).parent / "session_log_data"
ROWS = json.loads((DATA / "kilo.rows.json").read_text())
SESSION, CAPTURED_CWD, _ = ROWS["session"][0]
# The columns of Kilo 7.7.9's tables that muxd reads.
TABLES = ("CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, parent_id TEXT, "
          "time_updated INTEGER NOT NULL)",
          "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, "
          "data TEXT NOT NULL)",
          "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, "
          "time_created INTEGER NOT NULL, data TEXT NOT NULL)")


def kilo_db(home: Path, cwd: Path, messages: int) -> Path:
    """Kilo's database (WAL mode, as Kilo keeps it) holding the captured session's first
    `messages` messages and their parts, the session moved to `cwd`."""
    path = home / ".local" / "share" / "kilo" / "kilo.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        for table in TABLES:
            db.execute(table.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
        db.execute("INSERT OR REPLACE INTO session VALUES (?, ?, NULL, ?)", (SESSION, str(cwd), 1))
        kept = ROWS["message"][:messages]
        db.executemany("INSERT OR IGNORE INTO message VALUES (?, ?, ?, ?)", kept)
        ids = {m[0] for m in kept}
        db.executemany("INSERT OR IGNORE INTO part VALUES (?, ?, ?, ?, ?)", [p for p in ROWS["part"] if p[1] in ids])
    return path


def test_each_turn_from_the_mark(tmp_path, processes):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    process = start(processes, [named(tmp_path, "kilo"), LIFETIME], work, {"HOME": str(home)})
    assert locate("kilo", process.pid) is None, "no database yet"
    path = kilo_db(home, work, 1)
    assert locate("kilo", process.pid) == path and agent_of_log(path) == "kilo"
    cursor = cursor_for(path, "kilo", scope=str(work))
    assert isinstance(cursor, SessionStoreCursor) and cursor.read_turn().prompt == '"say hello"'
    kilo_db(home, work, 3)
    first = cursor.read_turn()
    # What the fake reported for the two requests (prompt_tokens, completion_tokens).
    assert (first.input_tokens, first.output_tokens, first.api_calls) == (3512 + 3578, 9 + 4, 2)
    assert first.response == "I run it.\n\nDone here, all good." and first.complete
    assert first.tool_calls == ["bash(echo hi)"] and first.model == "fake-model" and first.session_id == SESSION
    assert cursor.mark() == ROWS["message"][2][2] and not cursor.grew()
    assert cursor.read_turn().api_calls == 0, "nothing since the mark"
    kilo_db(home, work, 4)
    asked = cursor.read_turn()
    assert cursor.grew() and asked.prompt == "again" and not asked.complete, "its answer is awaited"
    kilo_db(home, work, 5)
    second = cursor.read_turn()
    assert (second.response, second.input_tokens, second.output_tokens, second.complete) == (
        "Second answer.", 3653, 2, True)
    assert cursor_for(path, "kilo", scope=str(tmp_path)).read_turn().api_calls == 0, "another cwd's session"


def test_a_failed_request_is_the_turn_s_error(tmp_path):
    work = tmp_path / "work"
    path = kilo_db(tmp_path, work, 1)
    failed = {"role": "assistant", "modelID": "fake-model", "time": {"created": 2}, "finish": None,
              "error": {"name": "APIError", "data": {"message": "fake failure", "statusCode": 401}}}
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO message VALUES ('msg_z', ?, ?, ?)", (SESSION, 1795974999999, json.dumps(failed)))
    facts = cursor_for(path, "kilo", scope=str(work)).read_turn()
    assert facts.complete and facts.error is not None and facts.error.message == "fake failure"


@pytest.mark.parametrize("linked", ["kilo.db", "kilo.db-wal", "kilo.db-shm"])
def test_a_link_in_kilo_s_store_is_never_followed(tmp_path, linked):
    work = tmp_path / "work"
    path = kilo_db(tmp_path, work, 3)
    with sqlite3.connect(path) as held:  # as Kilo holds it: WAL and index there
        held.execute("SELECT 1 FROM session").fetchall()
        cursor = cursor_for(path, "kilo", scope=str(work))
        assert cursor.read_turn().api_calls == 2
        target = path.with_name(linked)
        moved = target.with_name("moved")
        target.rename(moved)
        target.symlink_to(moved)
        assert cursor.read_turn().api_calls == 0 and not cursor.grew()
