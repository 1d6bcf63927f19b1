"""The real CLIs' own session logs, end to end: each CLI in a muxd pane against a scripted fake
model server; its log is located from the pane's pid, followed from each prompt, and parsed.

What is asserted is exact: the answer as the fake streamed it, the tool calls with their
arguments, the files written, the token counts the fake reported in `usage` (Aider's own
counts, which it prints, for Aider), the session id the log is named after.
Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from muxd.executions.session_logs import SessionLogCursor, TurnFacts, locate
from muxd.executions.session_logs.locate import process_tree, read_process
from muxd.testing.fake_models import (AnthropicFake, Call, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Say,
                                      Think, launch)
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

ANSWER = "Sure! Here is the answer from the scripted fake model, streamed to you word by word."
TURN_TIMEOUT_S = 60.0
UUID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")
PATCH = "*** Begin Patch\n*** Add File: new_file.txt\n+hello from the fake model\n*** End Patch\n"
AIDER_FILE_REPLY = 'I will create a new file.\n\nhello_fake.py\n```\nprint("hello from the fake model")\n```\n'


class Execution:
    """What the daemon will do for each prompt: locate the log and mark its end when the
    execution starts; when it ends, read what was appended (all of a log that is new)."""

    def __init__(self, pane: AgentPane, fake: FakeModelServer, agent: str) -> None:
        self.pane, self.fake, self.agent = pane, fake, agent
        self.cursor: SessionLogCursor | None = None
        self.requests_before = 0

    def pid(self) -> int:
        panes = json.loads(self.pane.server.cli("list-panes", "-a", "--json", check=True).stdout)
        return int(next(p["pid"] for p in panes if p["id"] == self.pane.pane_id))

    def submit(self, prompt: str) -> None:
        path = locate(self.agent, self.pid())
        self.cursor = SessionLogCursor(path, self.agent) if path else None
        if self.cursor is not None:
            self.cursor.mark()
        self.requests_before = len(self.fake.main_requests())
        self.pane.submit(prompt)

    def facts(self, last_words: str) -> TurnFacts:
        """The turn's facts once it ended as the daemon sees it (its last words on the screen,
        the pane Idle) and the log says it is complete too."""
        self.pane.server.wait_for_text(self.pane.pane_id, last_words, timeout=TURN_TIMEOUT_S)
        self.pane.settles_at("Idle", timeout=TURN_TIMEOUT_S)
        path = wait_until(lambda: locate(self.agent, self.pid()), timeout=TURN_TIMEOUT_S, message="the log located")
        if self.cursor is None or self.cursor.path != path:
            self.cursor = SessionLogCursor(path, self.agent)  # created during the turn: all of it is new
        cursor = self.cursor
        with self.pane.explained(f"{self.agent} turn in {path}"):
            return wait_until(lambda: (facts := cursor.read_turn()).complete and facts, timeout=TURN_TIMEOUT_S,
                              message="the turn complete in the log")

    def turn(self, prompt: str, last_words: str) -> tuple[TurnFacts, list[dict[str, Any]]]:
        """Submit `prompt`; the facts the log gives, and the usage the fake reported."""
        self.submit(prompt)
        return self.facts(last_words), self.fake_usage()

    def fake_usage(self) -> list[dict[str, Any]]:
        """What the fake reported in `usage` for this turn's requests, in order."""
        return [r.usage for r in self.fake.main_requests()[self.requests_before:] if r.usage]


def held_open(pid: int) -> list[str]:
    return [f for p in process_tree(pid) if (view := read_process(p)) for f in view.open_files]


@pytest.fixture
def session(muxd_server, tmp_path) -> Iterator[Callable[..., Execution]]:
    panes = CliPanes(muxd_server, tmp_path, timeout=TURN_TIMEOUT_S)

    def run(agent: str, fake: FakeModelServer, *args: str) -> Execution:
        pane = panes.start(agent, fake, *args)
        if pane is None:
            pytest.skip(panes.missing)
        return Execution(pane, fake, agent)

    yield run
    panes.close()


def test_claude_code_session_log(session, tmp_path):
    work = tmp_path / "work"
    fake = AnthropicFake([
        [Think(5, 0.05), Say(ANSWER, 0.03)],
        [Say("I will run a command.", 0.03),
         Call("Bash", {"command": "mkdir -p demo_dir", "description": "Create a demo directory"})],
        [Say("Now I write a file.", 0.03),
         Call("Write", {"file_path": str(work / "new_file.txt"), "content": "hello from the fake model\n"})],
        [Say("Both done.", 0.03)],
    ])
    run = session("claude", fake, "--permission-mode", "default", "--allowedTools", "Bash,Write")

    facts, usage = run.turn("please answer", "word by word.")
    path = run.cursor.path if run.cursor else None
    with run.pane.explained("the answer turn"):
        assert path is not None and path.parent.name == re.sub(r"[^A-Za-z0-9]", "-", str(work))
        assert facts.session_id == path.stem and UUID.fullmatch(path.stem)
        assert facts.prompt == "please answer" and facts.response == ANSWER
        assert facts.input_tokens == sum(u["input_tokens"] + u["cache_creation_input_tokens"]
                                         + u["cache_read_input_tokens"] for u in usage)
        assert facts.output_tokens == sum(u["output_tokens"] for u in usage)
        assert facts.tokens_used == facts.input_tokens + facts.output_tokens and facts.api_calls == len(usage) == 1
        assert facts.model == fake.main_requests()[-1].body["model"]
        assert facts.tool_calls == [] and facts.error is None

    facts, usage = run.turn("please make a dir and a file", "Both done.")
    with run.pane.explained("the tool turn"):
        assert facts.response == "I will run a command.\n\nNow I write a file.\n\nBoth done."
        assert facts.tool_calls == ["Bash(mkdir -p demo_dir)", f"Write({work / 'new_file.txt'})"]
        assert facts.files_written == [str(work / "new_file.txt")] and (work / "new_file.txt").exists()
        assert (work / "demo_dir").is_dir()
        assert facts.input_tokens == sum(u["input_tokens"] for u in usage)
        assert facts.output_tokens == sum(u["output_tokens"] for u in usage)
        assert facts.api_calls == len(usage) == 3
        assert path is not None and facts.session_id == path.stem


def test_codex_rollout(session, tmp_path):
    work = tmp_path / "work"
    fake = OpenAIResponsesFake([
        [Think(5, 0.05), Say(ANSWER, 0.03)],
        [Say("I will run a command.", 0.03), Call("exec_command", {"cmd": "mkdir -p demo_dir && echo made"})],
        [Call("exec_command", {"cmd": f"apply_patch <<'EOF'\n{PATCH}EOF\n"})],
        [Say("Both done.", 0.03)],
    ])
    run = session("codex", fake, "--dangerously-bypass-approvals-and-sandbox")

    facts, usage = run.turn("please answer", "word by word.")
    path = run.cursor.path if run.cursor else None
    with run.pane.explained("the answer turn"):
        assert path is not None and path.name.startswith("rollout-")
        assert str(path) in held_open(run.pid()), "found as the file Codex's app-server writes"
        assert facts.session_id and path.stem.endswith(facts.session_id)
        assert facts.prompt == "please answer" and facts.response == ANSWER
        assert facts.input_tokens == sum(u["input_tokens"] for u in usage)
        assert facts.output_tokens == sum(u["output_tokens"] for u in usage)
        assert facts.tokens_used == sum(u["total_tokens"] for u in usage) and facts.api_calls == len(usage) == 1
        assert facts.model == launch.CODEX_MODEL

    facts, usage = run.turn("please make a dir and a file", "Both done.")
    with run.pane.explained("the tool turn"):
        assert facts.response == "I will run a command.\n\nBoth done."
        assert facts.tool_calls == ["exec_command(mkdir -p demo_dir && echo made)",
                                    "exec_command(apply_patch <<'EOF' …)"]
        assert facts.files_written == [str(work / "new_file.txt")]
        assert (work / "new_file.txt").read_text() == "hello from the fake model\n"
        assert facts.tokens_used == sum(u["total_tokens"] for u in usage) and facts.api_calls == len(usage) == 3


def test_gemini_chat_recording(session, tmp_path):
    work = tmp_path / "work"
    fake = GeminiFake([
        [Say(ANSWER, 0.03)],
        [Say("Running.", 0.03), Call("run_shell_command", {"command": "mkdir -p demo_dir", "description": "demo"})],
        [Call("write_file", {"file_path": str(work / "new_file.txt"), "content": "hello\n"})],
        [Say("Both done.", 0.03)],
    ])
    run = session("gemini", fake, "--yolo")

    facts, usage = run.turn("please answer", "word by word.")
    with run.pane.explained("the answer turn"):
        assert facts.prompt == "please answer" and facts.response == ANSWER
        assert facts.input_tokens == sum(u["promptTokenCount"] for u in usage)
        assert facts.output_tokens == sum(u["candidatesTokenCount"] for u in usage)
        assert facts.session_id and UUID.fullmatch(facts.session_id)
        assert run.cursor and facts.session_id[:8] in run.cursor.path.name

    facts, usage = run.turn("please make a dir and a file", "Both done.")
    with run.pane.explained("the tool turn"):
        assert facts.response == "Running.\n\nBoth done."
        assert facts.tool_calls == ["run_shell_command(mkdir -p demo_dir)", f"write_file({work / 'new_file.txt'})"]
        assert facts.files_written == [str(work / "new_file.txt")]
        assert facts.tokens_used == sum(u["totalTokenCount"] for u in usage) and facts.api_calls == len(usage) == 3


def test_aider_chat_history(session):
    fake = OpenAIChatFake([[Say(ANSWER, 0.03)], [Say(AIDER_FILE_REPLY, 0.03)]])
    run = session("aider", fake, "notes.txt")

    run.submit("please answer")
    facts = run.facts("word by word.")
    tokens = re.findall(r"Tokens: (\d+) sent, (\d+) received\.", run.pane.screen())
    with run.pane.explained("the answer turn"):
        assert facts.prompt == "please answer" and facts.response == ANSWER
        # Aider counts tokens itself; the log keeps the counts it printed.
        assert (facts.input_tokens, facts.output_tokens) == tuple(int(n) for n in tokens[-1])

    run.submit("please make a file")
    run.pane.wait_for("AwaitingConfirmation", timeout=TURN_TIMEOUT_S)
    run.pane.type("y")
    run.pane.press("Enter")
    facts = run.facts("Applied edit to hello_fake.py")
    with run.pane.explained("the file turn"):
        assert facts.response == AIDER_FILE_REPLY.strip("\n") and facts.files_written == ["hello_fake.py"]
