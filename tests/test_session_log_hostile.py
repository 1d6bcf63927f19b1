"""A pane chooses where its agent's session log is (its environment and cwd name it), so the log
may hold a line nested 100,000 deep. A real daemon with fake agents in panes: every execution
still ends, from the screen where the log cannot be read."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

TURN_WAIT_S = 60.0  # a fake turn takes ~3 s; a loaded 2-core machine may take many times that
CLAUDE_SCREEN_ANSWER = "Here is my answer."  # what the fake Claude Code shows


def submit(server: MuxdTestServer, pane: str, message: str, *, wait: bool = False) -> dict:
    extra = ["--wait", "--wait-timeout", str(TURN_WAIT_S)] if wait else []
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
