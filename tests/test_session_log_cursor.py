"""SessionLogCursor: reads what was appended since `mark()`, bounded, on the captured logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from muxd.executions.session_logs import SessionLogCursor, TurnFacts, cursor as cursor_module

DATA = Path(__file__).parent / "session_log_data"
CLAUDE_SESSION = "4e3a0430-04d7-4ef4-98a3-7934c4ec3c05"


def claude_log(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "projects" / "-work" / f"{CLAUDE_SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    path.touch()
    return path


def turn_starts(agent: str) -> list[int]:
    return [t["start"] for t in json.loads((DATA / f"{agent}.turns.json").read_text())["turns"]]


def test_only_what_was_appended_since_mark(tmp_path):
    data = (DATA / "claude.jsonl").read_bytes()
    first, second, third = turn_starts("claude")[:3]
    path = claude_log(tmp_path)
    path.write_bytes(data[:second])
    cursor = SessionLogCursor(path)
    assert cursor.agent_type == "claude" and cursor.mark() == second
    assert cursor.read_turn() == TurnFacts(session_id=CLAUDE_SESSION), "nothing appended yet"
    with path.open("ab") as fh:
        fh.write(data[second:third])
    facts = cursor.read_turn()
    assert facts.prompt == "make a dir and a file" and facts.api_calls == 3 and facts.complete


def test_a_line_being_written_is_read_once_it_is_whole(tmp_path):
    data = (DATA / "codex.jsonl").read_bytes()
    starts = turn_starts("codex")
    turn = data[starts[0]:starts[1]]
    last_line = turn.rstrip(b"\n").rfind(b"\n") + 1  # task_complete
    path = tmp_path / "sessions" / "rollout-2026-11-24T11-10-12-x.jsonl"
    path.parent.mkdir()
    path.write_bytes(turn[:last_line + 10])
    cursor = SessionLogCursor(path, "codex")
    assert not cursor.read_turn().complete
    with path.open("ab") as fh:
        fh.write(turn[last_line + 10:])
    assert cursor.read_turn().complete


def test_a_log_that_did_not_exist_at_the_start_is_read_whole(tmp_path):
    """No mark(): offset 0, for a log the CLI created during the execution (its first prompt)."""
    path = tmp_path / "chats" / "session-2026-11-24T11-10-1b394265.jsonl"
    path.parent.mkdir()
    data = (DATA / "gemini.jsonl").read_bytes()
    path.write_bytes(data[:turn_starts("gemini")[1]])
    facts = SessionLogCursor(path).read_turn()
    assert facts.prompt == "say hello" and facts.session_id == "1b394265-c127-43fa-b99d-612d60062e91"


def test_the_session_id_comes_from_the_first_line_when_the_turn_has_none(tmp_path):
    data = (DATA / "gemini.jsonl").read_bytes()
    path = tmp_path / "chats" / "session-2026-11-24T11-10-1b394265.jsonl"
    path.parent.mkdir()
    path.write_bytes(data[:turn_starts("gemini")[2]])
    cursor = SessionLogCursor(path)
    cursor.mark()
    with path.open("ab") as fh:
        fh.write(data[turn_starts("gemini")[2]:])
    facts = cursor.read_turn()
    assert facts.prompt == "fail please" and facts.session_id == "1b394265-c127-43fa-b99d-612d60062e91"


def test_a_replaced_log_is_read_from_its_start(tmp_path):
    data = (DATA / "claude.jsonl").read_bytes()
    starts = turn_starts("claude")
    path = claude_log(tmp_path)
    path.write_bytes(data)
    cursor = SessionLogCursor(path)
    cursor.mark()
    path.write_bytes(data[:starts[1]])  # shorter than the mark: a new file in its place
    assert cursor.read_turn().prompt == "say hello"


def test_reads_are_bounded_and_keep_the_turns_end(tmp_path, monkeypatch):
    data = (DATA / "claude.jsonl").read_bytes()
    starts = turn_starts("claude")
    turn = data[starts[1]:starts[2]]
    path = claude_log(tmp_path)
    path.write_bytes(turn)
    whole = SessionLogCursor(path).read_turn()
    monkeypatch.setattr(cursor_module, "READ_MAX_BYTES", len(turn) // 2)
    tail = SessionLogCursor(path).read_turn()
    assert whole.prompt == "make a dir and a file" and tail.prompt is None, "its start is past the bound"
    assert tail.complete and tail.response and whole.response and whole.response.endswith(tail.response)


def test_a_missing_log_gives_empty_facts(tmp_path):
    cursor = SessionLogCursor(tmp_path / "projects" / "-w" / f"{CLAUDE_SESSION}.jsonl")
    assert cursor.mark() == 0
    assert cursor.read_turn() == TurnFacts()


def test_an_unknown_log_needs_its_agent_named(tmp_path):
    with pytest.raises(ValueError):
        SessionLogCursor(tmp_path / "notes.txt")
    assert SessionLogCursor(tmp_path / "notes.txt", "aider").agent_type == "aider"


def test_a_failing_parser_gives_empty_facts(tmp_path, monkeypatch):
    def broken(data: bytes) -> TurnFacts:
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    monkeypatch.setitem(cursor_module.PARSERS, "aider", broken)
    history = tmp_path / ".aider.chat.history.md"
    history.write_bytes(b"#### hello\n\nanswer\n\n")
    assert SessionLogCursor(history).read_turn() == TurnFacts()
