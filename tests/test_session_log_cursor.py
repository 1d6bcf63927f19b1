"""SessionLogCursor: reads what was appended since `mark()`, bounded, on the captured logs; and
only the agent's own regular file, never waiting on a FIFO nor following a link into it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from muxd.executions.session_logs import SessionLogCursor, TurnFacts, cursor as cursor_module
from muxd.testing.wait import returns_within

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


# ---------------------------------------------------------------- files a pane may have put there

SECRET = b"TOP-SECRET-7f3a\n"
RESULT_WAIT_S = 10.0



@pytest.fixture
def fifo(tmp_path) -> Iterator[Path]:
    path = tmp_path / "work" / ".aider.chat.history.md"
    path.parent.mkdir()
    os.mkfifo(path)
    yield path
    try:  # a reader still waiting (the bug this guards against) gets its end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def private_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    return secret


def test_a_fifo_is_not_waited_on(fifo):
    cursor = SessionLogCursor(fifo, "aider")
    assert returns_within(cursor.mark, timeout=RESULT_WAIT_S) == 0
    assert returns_within(cursor.read_turn, timeout=RESULT_WAIT_S) == TurnFacts()


def test_a_link_to_another_file_is_not_read(tmp_path):
    history = tmp_path / ".aider.chat.history.md"
    history.symlink_to(private_file(tmp_path))
    assert SessionLogCursor(history, "aider").read_turn() == TurnFacts()


def test_a_hard_link_to_another_file_is_not_read(tmp_path):
    history = tmp_path / ".aider.chat.history.md"
    os.link(private_file(tmp_path), history)
    assert SessionLogCursor(history, "aider").read_turn() == TurnFacts()


def test_a_linked_directory_in_the_clis_own_layout_is_not_followed(tmp_path):
    """projects/<slug> linked to another project's directory: that project's log stays unread."""
    data = (DATA / "claude.jsonl").read_bytes()
    elsewhere = claude_log(tmp_path / "elsewhere")
    elsewhere.write_bytes(data)
    project = tmp_path / "config" / "projects" / "-work"
    project.parent.mkdir(parents=True)
    project.symlink_to(elsewhere.parent)
    assert SessionLogCursor(project / elsewhere.name).read_turn() == TurnFacts()
    assert SessionLogCursor(elsewhere).read_turn().prompt == "fail please", "read where it really is"


def test_a_linked_home_is_followed(tmp_path):
    """~/.claude linked into a dotfiles checkout: the home is where the person says it is."""
    data = (DATA / "claude.jsonl").read_bytes()
    real = claude_log(tmp_path / "dotfiles")
    real.write_bytes(data)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".claude").symlink_to(tmp_path / "dotfiles" / ".claude")
    linked = tmp_path / "home" / ".claude" / "projects" / "-work" / real.name
    assert SessionLogCursor(linked).read_turn() == SessionLogCursor(real).read_turn() != TurnFacts()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_not_read(tmp_path):
    history = tmp_path / ".aider.chat.history.md"
    history.write_bytes(b"#### hello\n\nanswer\n\n> Tokens: 5 sent, 1 received.\n\n")
    assert SessionLogCursor(history, "aider").read_turn().response == "answer"
    os.chown(history, 65534, 65534)
    assert SessionLogCursor(history, "aider").read_turn() == TurnFacts()
    assert SessionLogCursor(history, "aider", owner_uid=65534).read_turn().response == "answer"


def test_a_failing_parser_gives_empty_facts(tmp_path, monkeypatch):
    def broken(data: bytes) -> TurnFacts:
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    monkeypatch.setitem(cursor_module.PARSERS, "aider", broken)
    history = tmp_path / ".aider.chat.history.md"
    history.write_bytes(b"#### hello\n\nanswer\n\n")
    assert SessionLogCursor(history).read_turn() == TurnFacts()
