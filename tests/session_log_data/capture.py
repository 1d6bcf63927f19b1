"""Capture the session logs in this directory: run each real CLI in a muxd pane against a
scripted fake model server, through the turns below, and keep its log trimmed (long strings
cut, Claude Code's request bookkeeping dropped) with each turn's byte range and the token
usage the fake reported for it (`<agent>.turns.json`).

    .venv/bin/python tests/session_log_data/capture.py [claude|codex|gemini|aider …]

Needs .ci/install-agents. Paths in the logs are under /tmp/muxd-capture/<agent>/.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from muxd.executions.session_logs import locate
from muxd.testing.fake_models import (AnthropicFake, Call, Fail, GeminiFake, OpenAIChatFake, OpenAIResponsesFake,
                                      Pause, Say, Think, launch)
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane
from muxd.testing.server import MuxdTestServer

HERE = Path(__file__).parent
CAPTURE_ROOT = Path("/tmp/muxd-capture")
STRING_MAX_CHARS = 300
TURN_TIMEOUT_S = 60.0
# Claude Code lines about requests and context that say nothing about the turn's facts.
CLAUDE_DROPPED = {"api-request", "api-request-shape", "api-request-blob", "attachment"}

ANSWER = "Hello there, this is the scripted answer."
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hi there\n*** End Patch\n"
AIDER_FILE_REPLY = 'I will create a new file.\n\nhello_fake.py\n```\nprint("hello from the fake model")\n```\n'


class Session:
    """One CLI in a pane; records the log's size before each prompt."""

    def __init__(self, agent: str, server: MuxdTestServer, fake: FakeModelServer, make: Callable[..., Any],
                 *args: str) -> None:
        bin_dir, why = launch.find_cli(agent)
        if bin_dir is None:
            raise SystemExit(why)
        self.agent, self.fake = agent, fake
        root = CAPTURE_ROOT / agent
        shutil.rmtree(root, ignore_errors=True)
        self.pane = AgentPane(server, make(root, fake.url, bin_dir, *args), session=agent)
        self.turns: list[dict[str, Any]] = []
        self.log: Path | None = None

    def pid(self) -> int:
        panes = json.loads(self.pane.server.cli("list-panes", "-a", "--json", check=True).stdout)
        return int(next(p["pid"] for p in panes if p["id"] == self.pane.pane_id))

    def prompt(self, text: str) -> None:
        self.log = self.log or locate(self.agent, self.pid())
        start = self.log.stat().st_size if self.log else 0
        requests = len(self.fake.main_requests())
        self.turns.append({"prompt": text, "start": start, "requests_before": requests})
        self.pane.submit(text)

    def shows(self, text: str) -> None:
        self.pane.server.wait_for_text(self.pane.pane_id, text, timeout=TURN_TIMEOUT_S)

    def idle(self) -> None:
        self.pane.settles_at("Idle", timeout=TURN_TIMEOUT_S)

    def finish(self) -> tuple[Path, list[dict[str, Any]]]:
        self.log = self.log or locate(self.agent, self.pid())
        assert self.log is not None, f"no {self.agent} log found"
        main = self.fake.main_requests()
        for turn, following in zip(self.turns, [*self.turns[1:], None]):
            upto = following["requests_before"] if following else len(main)
            turn["fake_usage"] = [r.usage for r in main[turn.pop("requests_before"):upto] if r.usage]
        return self.log, self.turns


def claude(server: MuxdTestServer, work: Path) -> Session:
    fake = AnthropicFake([
        [Think(3, 0.02), Say(ANSWER, 0.02)],
        [Say("I will run a command.", 0.02), Call("Bash", {"command": "mkdir -p demo", "description": "Make demo"})],
        [Say("Now a file.", 0.02), Call("Write", {"file_path": str(work / "new.txt"), "content": "hi\n"})],
        [Say("All done.", 0.02), Say("Second block.", 0.02)],
        [Say("Streaming slowly now.", 0.02), Pause(30)],
        [Say("Another file.", 0.02), Call("Write", {"file_path": str(work / "denied.txt"), "content": "no\n"})],
        [Fail(529, "Overloaded", times=2), Say("Recovered.", 0.02)],
        [Fail(400, "Bad request thing", times=None)],
    ])
    fake.start()
    s = Session("claude", server, fake, launch.claude, "--permission-mode", "default", "--allowedTools", "Bash")
    s.pane.start().wait_for("Idle", lambda st: st["session"]["model"])
    s.prompt("say hello"); s.shows("scripted answer"); s.idle()
    s.prompt("make a dir and a file"); s.pane.wait_for("AwaitingConfirmation", timeout=TURN_TIMEOUT_S)
    s.pane.press("Enter"); s.shows("Second block."); s.idle()
    s.prompt("be slow"); s.shows("Streaming slowly"); s.pane.press("Escape"); s.shows("Interrupted"); s.idle()
    s.prompt("write another file"); s.pane.wait_for("AwaitingConfirmation", timeout=TURN_TIMEOUT_S)
    s.pane.press("Escape"); s.idle()
    s.prompt("overload please"); s.shows("Recovered."); s.idle()
    s.prompt("fail please"); s.shows("API Error: 400"); s.idle()
    return s


def codex(server: MuxdTestServer, work: Path) -> Session:
    fake = OpenAIResponsesFake([
        [Think(3, 0.02), Say(ANSWER, 0.02)],
        [Say("I will run a command.", 0.02), Call("exec_command", {"cmd": "mkdir -p demo && echo made"})],
        [Call("exec_command", {"cmd": f"apply_patch <<'EOF'\n{PATCH}EOF\n"})],
        [Say("All done.", 0.02), Say("Second block.", 0.02)],
        [Say("Streaming slowly now.", 0.02), Pause(30)],
        [Fail(500, "Internal error")],
    ])
    fake.start()
    s = Session("codex", server, fake, launch.codex, "--dangerously-bypass-approvals-and-sandbox")
    s.pane.start().wait_for("Idle", lambda st: st["session"]["model"])
    s.prompt("say hello"); s.shows("scripted answer"); s.idle()
    s.prompt("make a dir and a file"); s.shows("Second block."); s.idle()
    s.prompt("be slow"); s.shows("Streaming slowly"); s.pane.press("Escape"); s.shows("interrupted"); s.idle()
    s.prompt("fail please"); s.shows("high demand"); s.idle()
    return s


def gemini(server: MuxdTestServer, work: Path) -> Session:
    fake = GeminiFake([
        [Say(ANSWER, 0.02)],
        [Say("Running.", 0.02), Call("run_shell_command", {"command": "mkdir -p gdemo", "description": "demo"})],
        [Call("write_file", {"file_path": str(work / "g.txt"), "content": "hi\n"})],
        [Say("The command finished.", 0.02)],
        [Fail(400, "Bad request thing", times=None)],
    ])
    fake.start()
    s = Session("gemini", server, fake, launch.gemini, "--yolo")
    s.pane.start().wait_for("Idle", lambda st: st["session"]["model"])
    s.prompt("say hello"); s.shows("scripted answer"); s.idle()
    s.prompt("run it and write"); s.shows("The command finished."); s.idle()
    s.prompt("fail please"); s.shows("Bad request thing"); s.idle()
    return s


def aider(server: MuxdTestServer, work: Path) -> Session:
    fake = OpenAIChatFake([
        [Say(ANSWER, 0.02)],
        [Say(AIDER_FILE_REPLY, 0.02)],
        [Fail(500, "fake overload", times=2), Say("Recovered after the overload.", 0.02)],
        [Fail(401, "bad key", times=None)],
    ])
    fake.start()
    s = Session("aider", server, fake, launch.aider, "notes.txt")
    s.pane.start().wait_for("Idle", lambda st: st["session"]["model"], timeout=TURN_TIMEOUT_S)
    s.prompt("say hello"); s.shows("scripted answer"); s.idle()
    s.prompt("make a file"); s.pane.wait_for("AwaitingConfirmation", timeout=TURN_TIMEOUT_S)
    s.pane.type("y"); s.pane.press("Enter"); s.idle()
    s.prompt("overload test"); s.shows("Recovered after the overload."); s.idle()
    s.prompt("fail please"); s.shows("AuthenticationError"); s.idle()
    return s


def trimmed(agent: str, data: bytes, turns: list[dict[str, Any]]) -> bytes:
    """`data` with long strings cut and (Claude) bookkeeping lines dropped; turn offsets moved."""
    if agent == "aider":
        return data
    out, moved, offset = bytearray(), {}, 0
    for line in data.splitlines(keepends=True):
        moved[offset] = len(out)
        offset += len(line)
        record = json.loads(line)
        if agent == "claude" and record.get("type") in CLAUDE_DROPPED:
            continue
        out += json.dumps(_cut(record), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    moved[offset] = len(out)
    for turn in turns:
        turn["start"] = moved[turn["start"]]
    return bytes(out)


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > STRING_MAX_CHARS:
        return value[:STRING_MAX_CHARS] + "…[trimmed]"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value]
    return value


SCENARIOS = {"claude": claude, "codex": codex, "gemini": gemini, "aider": aider}
OUTPUT_NAMES = {"claude": "claude.jsonl", "codex": "codex.jsonl", "gemini": "gemini.jsonl",
                "aider": "aider.chat.history.md"}


def main(agents: list[str]) -> None:
    server = MuxdTestServer().start()
    try:
        for agent in agents or list(SCENARIOS):
            session = SCENARIOS[agent](server, CAPTURE_ROOT / agent / "work")
            try:
                log, turns = session.finish()
                data = trimmed(agent, log.read_bytes(), turns)
            finally:
                session.pane.close()
                session.fake.stop()
            (HERE / OUTPUT_NAMES[agent]).write_bytes(data)
            (HERE / f"{agent}.turns.json").write_text(json.dumps(
                {"log": str(log), "turns": turns}, indent=1) + "\n")
            print(f"{agent}: {log} -> {OUTPUT_NAMES[agent]} ({len(data)} bytes, {len(turns)} turns)")
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
