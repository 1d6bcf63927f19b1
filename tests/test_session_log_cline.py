"""Cline's session store: the messages file Cline 3.0.65 wrote in a muxd pane against the fake
Chat Completions API (tests/session_log_data/cline.messages.json, its system prompt cut), read
turn by turn; the session found from its sessions database by the process's pid and cwd; and
never a database or messages file that is a link."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_session_log_locate import LIFETIME, named, processes, start  # noqa: F401 (a fixture)

from muxd.executions.session_logs import SessionLogCursor, TurnError, agent_of_log, cline, locate

DATA = Path(__file__).parent / "session_log_data"
SESSION = "1795973501037_rt07o"
OTHER_SESSION = "1795973400000_older"
# The columns of Cline 3.0.65's `sessions` table that muxd reads, and those it may not leave NULL.
SESSIONS_TABLE = """CREATE TABLE sessions (session_id TEXT PRIMARY KEY, source TEXT NOT NULL, pid INTEGER NOT NULL,
    started_at TEXT NOT NULL, status TEXT NOT NULL, cwd TEXT NOT NULL, is_subagent INTEGER NOT NULL DEFAULT 0)"""


def document() -> bytes:
    return (DATA / "cline.messages.json").read_bytes()


def with_messages(count: int) -> bytes:
    """The captured file as Cline wrote it when it held its first `count` messages."""
    whole = json.loads(document())
    return json.dumps({**whole, "messages": whole["messages"][:count]}).encode()


def test_each_turn_of_the_captured_session():
    hello = cline.parse_turn(with_messages(2))
    assert hello.prompt == "say hello", "the <user_input> wrapper is Cline's, not the person's"
    assert hello.response == "Hello from the fake model, streamed slowly word by word so that it is seen."
    # What the fake reported for that request (prompt_tokens, completion_tokens).
    assert (hello.input_tokens, hello.output_tokens, hello.tokens_used) == (1105, 15, 1120)
    assert hello.model == "fake-model" and hello.session_id == SESSION and hello.complete and hello.api_calls == 1

    command = cline.parse_turn(with_messages(6), since=2)
    assert command.prompt == "run a command" and command.response == "The command ran fine."
    assert command.tool_calls == ["run_commands(sleep 2; echo hi)"]
    assert (command.input_tokens, command.output_tokens, command.api_calls) == (1145 + 1223, 6 + 4, 2)
    assert command.context_used == 1223 + 4 and command.complete

    asked = cline.parse_turn(with_messages(4), since=2)
    assert asked.tool_calls == ["run_commands(sleep 2; echo hi)"] and not asked.complete, "its result is awaited"

    failed = cline.parse_turn(document(), since=6)
    assert failed.prompt == "fail now" and failed.complete and failed.api_calls == 0
    assert failed.error == TurnError(type="api_error", message="fake failure")


def test_a_torn_or_foreign_file_gives_nothing():
    assert cline.parse_turn(document()[:-10]).api_calls == 0 and cline.message_count(document()[:-10]) is None
    assert cline.message_count(b"[" * 100_000 + b"]" * 100_000) is None
    assert cline.parse_turn(b'{"messages": [1, "x", {"role": "assistant", "content": 3}]}').response is None


def messages_file(data: Path, session: str = SESSION, content: bytes = b"") -> Path:
    path = data / "sessions" / session / f"{session}.messages.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content or document())
    return path


def test_cursor_reads_the_turn_after_the_messages_it_marked(tmp_path):
    path = messages_file(tmp_path, content=with_messages(2))
    cursor = SessionLogCursor(path)
    assert cursor.agent_type == "cline" and cursor.mark() == 2 and not cursor.grew()
    assert cursor.read_turn().api_calls == 0, "nothing since the mark"
    path.write_bytes(with_messages(3))
    assert cursor.grew() and cursor.read_turn().prompt == "run a command"
    path.write_bytes(with_messages(6))
    facts = cursor.read_turn()
    assert facts.response == "The command ran fine." and facts.complete and facts.input_tokens == 1145 + 1223
    assert SessionLogCursor(path).read_turn().response == "The command ran fine.", "never marked: the last turn"
    path.write_bytes(with_messages(6)[:-1])  # caught mid-write
    assert not cursor.grew() and cursor.read_turn().api_calls == 0


# ---------------------------------------------------------------- the session a process runs

def sessions_db(data: Path, rows: list[tuple[str, int, str, str]]) -> Path:
    """Cline's sessions database in WAL mode, as Cline leaves it while it runs (rows: id, pid,
    started_at, cwd)."""
    path = data / "db" / "sessions.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(SESSIONS_TABLE)
        db.executemany("INSERT INTO sessions (session_id, source, pid, started_at, status, cwd) "
                       "VALUES (?, 'cli', ?, ?, 'running', ?)", rows)
    return path


def test_the_session_of_the_process_else_the_newest_of_its_cwd(tmp_path, processes):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    data, program = home / ".cline" / "data", named(tmp_path, "cline")
    process = start(processes, [program, LIFETIME], work, {"HOME": str(home)})
    assert locate("cline", process.pid) is None, "no database yet"
    sessions_db(data, [(SESSION, process.pid, "2026-11-29T17:31:41.063Z", str(work)),
                       (OTHER_SESSION, 1, "2026-11-29T18:00:00.000Z", str(work))])
    ours, other = messages_file(data), messages_file(data, OTHER_SESSION)
    assert locate("cline", process.pid) == ours, "its own pid's, though another is newer"
    assert agent_of_log(ours) == "cline"
    another = start(processes, [program, LIFETIME], work, {"HOME": str(home)})
    assert locate("cline", another.pid) == other, "no session of its pid: the newest in its cwd"
    told = tmp_path / "elsewhere"
    sessions_db(told, [(SESSION, another.pid, "2026-11-29T17:31:41.063Z", str(work))])
    found = messages_file(told)
    env = {"HOME": str(home), "CLINE_DATA_DIR": str(told)}
    assert locate("cline", start(processes, [program, LIFETIME], work, env).pid) == found


@pytest.mark.parametrize("linked", ["db/sessions.db", "db/sessions.db-shm", "db/sessions.db-wal",
                                    f"sessions/{SESSION}/{SESSION}.messages.json"])
def test_a_link_in_cline_s_store_is_never_followed(tmp_path, processes, linked):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    data = home / ".cline" / "data"
    process = start(processes, [named(tmp_path, "cline"), LIFETIME], work, {"HOME": str(home)})
    sessions_db(data, [(SESSION, process.pid, "2026-11-29T17:31:41.063Z", str(work))])
    messages_file(data)
    with sqlite3.connect(data / "db" / "sessions.db") as held:  # as Cline holds it: WAL and index there
        held.execute("SELECT 1 FROM sessions").fetchall()
        assert locate("cline", process.pid) is not None
        target = data / linked
        moved = target.with_name("moved")
        target.rename(moved)
        target.symlink_to(moved)
        assert locate("cline", process.pid) is None
