"""A pane chooses where its agent's session log is (its environment and cwd name it), so the log
may be a FIFO, a link to a private file, or hold a line nested 100,000 deep. A real daemon with
fake agents in panes: every execution still ends, from the screen where the log is refused or
unreadable, nothing but the agent's own log reaches a response, and no pane's log holds up
another's."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

from muxd.config import EXECUTION_WAIT_MAX_S
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.fake_agents import aider as fake_aider
from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

TURN_WAIT_S = 60.0  # a fake turn takes ~3 s; a loaded 2-core machine may take many times that
CLAUDE_SCREEN_ANSWER = "Here is my answer."  # what the fake Claude Code shows
SECRET = "TOP-SECRET-7f3a"


def submit(server: MuxdTestServer, pane: str, message: str, *, wait: bool = False) -> dict:
    extra = ["--wait", "--wait-timeout", f"{min(stretched(TURN_WAIT_S), EXECUTION_WAIT_MAX_S):.0f}"] if wait else []
    result = server.cli("submit", "-t", pane, message, "--json", *extra, timeout=TURN_WAIT_S + 30)
    assert result.stdout.strip(), result.stderr
    return json.loads(result.stdout)


def stored(server: MuxdTestServer, execution_id: str) -> dict:
    """The execution as the store has it once it ended (the history's query reads the store)."""
    def ended() -> dict | None:
        rows = json.loads(server.cli("history", "--json", "--limit", "100", check=True).stdout)["executions"]
        row = next((r for r in rows if r["id"] == execution_id), None)
        return row if row is not None and row["status"] not in ("pending", "running") else None
    return wait_until(ended, timeout=TURN_WAIT_S, message=f"{execution_id} ended and stored")


def claude_project(config: Path, cwd: Path) -> Path:
    return config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def test_a_fifo_as_one_agents_log_holds_up_no_other_agent(muxd_server, tmp_path):
    server = muxd_server
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    fifo = tmp_path / "a" / "history.fifo"
    os.mkfifo(fifo)  # nobody ever writes to it: opening it to read would wait for ever
    stuck = start_fake_agent(server, "fifo", "aider", cwd=tmp_path / "a", env={"AIDER_CHAT_HISTORY_FILE": str(fifo)})
    other = start_fake_agent(server, "other", "aider", cwd=tmp_path / "b",
                             env={"AIDER_CHAT_HISTORY_FILE": str(tmp_path / "b" / "history.md")})
    first = submit(server, stuck, "hello")
    server.wait_for_text(stuck, f"Tokens: {fake_aider.THINK_TOKENS[0]} sent", timeout=TURN_WAIT_S)
    # The FIFO pane's turn is over on screen: its log is read now, as the other pane's turn runs.
    second = stored(server, submit(server, other, "hi there", wait=True)["id"])
    assert second["status"] == "success", second
    assert second["response"] == fake_aider.ANSWER and second["sources"]["response"] == "session_log", second
    mine = stored(server, first["id"])
    assert mine["status"] == "success" and mine["sources"]["response"] == "screen", mine
    assert mine["response"] == fake_aider.ANSWER


def test_a_link_to_a_private_file_never_becomes_a_response(muxd_server, tmp_path):
    server = muxd_server
    work = tmp_path / "work"
    work.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    secret.chmod(0o600)
    pane = start_fake_agent(server, "worker", "aider", cwd=work)
    sent = submit(server, pane, "hello")
    server.wait_for_text(pane, f"Waiting for {fake_aider.MODEL}", timeout=TURN_WAIT_S)
    (work / ".aider.chat.history.md").symlink_to(secret)  # linked in as the history during the turn
    done = stored(server, sent["id"])
    assert SECRET not in json.dumps(done), done
    assert done["status"] == "success" and done["response"] == fake_aider.ANSWER
    assert done["sources"]["response"] == "screen", done
    shown = server.cli("show", sent["id"], "--json", check=True).stdout
    assert SECRET not in shown


def test_a_line_nested_100000_deep_ends_the_execution_from_the_screen(muxd_server, tmp_path):
    server = muxd_server
    work, config = tmp_path / "work", tmp_path / "claude-config"
    work.mkdir()
    pane = start_fake_agent(server, "worker", "claude", cwd=work, env={"CLAUDE_CONFIG_DIR": str(config)})
    sent = submit(server, pane, "hello")
    server.wait_for_text(pane, "Gusting", timeout=TURN_WAIT_S)
    log = claude_project(config, work) / f"{uuid.uuid4()}.jsonl"  # its log, created during the turn
    log.parent.mkdir(parents=True)
    log.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    done = stored(server, sent["id"])
    assert done["status"] == "success" and done["response"] == CLAUDE_SCREEN_ANSWER, done
    assert done["sources"]["response"] == "screen"
    # The daemon is fine: the next turn ends too, and nothing is left running.
    again = submit(server, pane, "again", wait=True)
    assert again["status"] == "success" and again["response"] == CLAUDE_SCREEN_ANSWER, again
    active = json.loads(server.cli("history", "--active", "--json", check=True).stdout)["executions"]
    assert active == []
