"""Seed 001's task queue with the real CLIs in muxd panes against scripted fake model servers:
an agent working the queue itself over muxd's MCP tools with its pane's token (the claim, the
events and the knowledge it leaves are `agent:%N`'s), and `muxd task run` driving an agent that
knows nothing of MCP through a plan, a failed check sent back to it as a new prompt.
Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from muxd.testing.fake_models import AnthropicFake, OpenAIResponsesFake, Say
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes
from muxd.testing.fake_models.mcp_agents import mcp_turns, wait_for_tool_results
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

pytestmark = pytest.mark.agents

FAKES = {"claude": AnthropicFake, "codex": OpenAIResponsesFake}
DONE = "The task is done and what I learned is saved."
TURN_TIMEOUT_S = 60  # a turn of a few calls takes ~3 s alone, ~20 s with four workers on two cores
QUEUE_TIMEOUT_S = 60  # four turns and two checks, one after the other


def task_cli(server: MuxdTestServer, *args: str) -> Any:
    return json.loads(server.cli("task", *args, "--json", check=True).stdout)


@pytest.fixture
def agent(muxd_server, tmp_path) -> Iterator[Callable[..., AgentPane]]:
    """`start(cli, fake, *args, mcp=False)`: the CLI in a pane against the fake, both closed after
    the test; with `mcp` it calls muxd's MCP tools as its pane's agent."""
    panes = CliPanes(muxd_server, tmp_path, timeout=TURN_TIMEOUT_S)

    def start(cli: str, fake: FakeModelServer, *args: str, mcp: bool = False) -> AgentPane:
        pane = panes.start(cli, fake, *args, mcp=mcp)
        if pane is None:
            pytest.skip(panes.missing)
        return pane

    yield start
    panes.close()


# ------------------------------------------------------------ an agent working the queue over MCP


@pytest.mark.parametrize("cli", sorted(FAKES))
def test_agent_works_the_queue_over_mcp_as_its_own_pane(cli, agent, muxd_server):
    task = task_cli(muxd_server, "add", "Fix the flaky login test", "-p", "10",
                    "-d", "The login test fails one run in ten on CI.")
    fake = FAKES[cli]()
    pane = agent(cli, fake, mcp=True)
    principal = f"agent:{pane.pane_id}"
    learning = "The login test races the session table migration; wait for it before the first request."
    fake.script.extend(mcp_turns(
        ("get_next_actionable", {}),
        ("claim_task", {"taskId": task["id"]}),
        ("update_task_status", {"taskId": task["id"], "status": "in_progress",
                                "context": {"branch": "fix-login"}}),
        ("complete_task", {"taskId": task["id"], "output": {"summary": "waited for the migration"},
                           "learnings": [{"content": learning, "title": "login test race",
                                          "tags": ["tests"]}]}),
        done=DONE))
    mark = pane.mark()
    pane.run_turn("work on the task queue", DONE, timeout=TURN_TIMEOUT_S)

    listed, claimed, going, completed = wait_for_tool_results(fake, 4)
    with pane.explained("the tool results the CLI sent back", mark):
        assert [r.tool for r in (listed, claimed, going, completed)] == [
            "get_next_actionable", "claim_task", "update_task_status", "complete_task"]
        for result in (listed, claimed, going, completed):
            assert not result.is_error and isinstance(result.data, dict), result
        assert [t["taskId"] for t in listed.data["tasks"]] == [task["id"]], listed
        assert listed.data["tasks"][0]["state"] == "ready"
        assert claimed.data["state"] == "claimed" and claimed.data["claimedBy"] == principal, claimed
        assert claimed.data["claimed"] is True
        assert going.data["state"] == "in_progress" and going.data["context"] == {"branch": "fix-login"}, going
        assert completed.data["state"] == "done" and completed.data["verificationStatus"] == "skipped", completed
        assert len(completed.data["knowledgeIds"]) == 1, completed

    # As the system sees it: the task done, held by the pane's agent, every move of it by that agent.
    shown = task_cli(muxd_server, "show", task["id"])
    done = shown["task"]
    assert done["state"] == "done" and done["claimed_by"] == principal, done
    assert done["output"] == {"summary": "waited for the migration"} and done["context"] == {"branch": "fix-login"}
    events = [(e["kind"], e["actor"]) for e in shown["events"]]
    assert [kind for kind, _ in events] == ["created", "claimed", "status", "completed"], events
    assert events[0] == ("created", "system") and {actor for _, actor in events[1:]} == {principal}, events
    found = json.loads(muxd_server.cli("knowledge", "search", "session table migration", "--json",
                                       check=True).stdout)["entries"]
    assert [e["id"] for e in found] == completed.data["knowledgeIds"], found
    assert found[0]["content"] == learning and found[0]["source_task_id"] == task["id"], found


# ------------------------------------------------------------ `muxd task run` driving an agent


def prompts_received(fake: AnthropicFake) -> list[str]:
    """The text of each user prompt the CLI sent to the model, in the order it first sent them
    (every request repeats the conversation; tool results are not prompts)."""
    seen: list[str] = []
    for request in fake.main_requests():
        for message in request.body.get("messages") or []:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text"
                             and not b.get("text", "").lstrip().startswith("<system-reminder>"))
            if text and text not in seen:
                seen.append(text)
    return seen


def of_kind(executions: list[dict], kind: str) -> list[dict]:
    return sorted((e for e in executions if e["kind"] == kind), key=lambda e: e["started_at"])


def test_task_run_drives_a_real_agent_through_a_plan_and_a_failed_check(agent, muxd_server, tmp_path):
    fake = AnthropicFake([[Say(f"Finished step {n}.", 0.02)] for n in range(1, 5)])
    pane = agent("claude", fake, "--permission-mode", "default")
    _drive_a_plan(muxd_server, pane, fake, tmp_path)


def _drive_a_plan(server: MuxdTestServer, pane: AgentPane, fake: AnthropicFake, tmp_path) -> None:
    check = (f"if [ -f {tmp_path}/seen ]; then echo ok; "
             f"else touch {tmp_path}/seen; echo 'FAIL: expected 42'; exit 1; fi")
    # The checked task between the others: the one sent back is fixed before the next is taken.
    first = task_cli(server, "add", "Add the parser", "-d", "Parse the config file.", "--plan", "release",
                     "-p", "10")
    checked = task_cli(server, "add", "Compute the answer", "-d", "It must be 42.", "--plan", "release",
                       "-p", "20", "--verify-cmd", check)
    last = task_cli(server, "add", "Write the changelog", "--plan", "release", "-p", "30")
    task_cli(server, "add", "Not in this plan", "-p", "0")
    order = [first, checked, last]

    def states() -> dict[str, str]:
        return {t["title"]: t["state"] for t in task_cli(server, "ls", "--plan", "release")["tasks"]}

    mark = pane.mark()
    out = server.cli("task", "run", "-t", pane.pane_id, "--plan", "release", check=True).stdout
    assert f"as agent:{pane.pane_id}" in out, out
    try:
        wait_until(lambda: set(states().values()) == {"done"}, timeout=QUEUE_TIMEOUT_S, interval=0.25,
                   message="every task of the plan done")
    except AssertionError:
        raise AssertionError(pane.report(f"the plan not done within {QUEUE_TIMEOUT_S}s: {states()}", mark)) from None
    stopped = server.cli("task", "stop", "-t", pane.pane_id, check=True).stdout
    assert f"{pane.pane_id} plan=release as agent:{pane.pane_id}: task -, 3 done, 0 released" in stopped, stopped

    principal = f"agent:{pane.pane_id}"
    shown = {t["id"]: task_cli(server, "show", t["id"]) for t in order}
    for t in order:
        task, executions = shown[t["id"]]["task"], shown[t["id"]]["executions"]
        assert task["claimed_by"] == principal, task
        prompts = of_kind(executions, "prompt")
        assert prompts and all(e["status"] == "success" and e["triggered_by"] == "schedule"
                               and e["task_id"] == t["id"] and e["pane_id"] == pane.pane_id
                               and e["principal"] == principal for e in prompts), prompts
        sent = f"Task: {t['title']}" + (f"\n\n{t['description']}" if t["description"] else "")
        assert prompts[0]["message"] == sent, prompts
        history = json.loads(server.cli("history", "--task", t["id"], "--json", check=True).stdout)
        assert {e["id"] for e in history["executions"]} == {e["id"] for e in executions}, history
    # One scripted answer per prompt, in queue order (each turn was one request of the CLI); the
    # task's output is the last one's.
    answers = [[e["response"] for e in of_kind(shown[t["id"]]["executions"], "prompt")] for t in order]
    assert answers == [["Finished step 1."], ["Finished step 2.", "Finished step 3."], ["Finished step 4."]], answers
    assert [shown[t["id"]]["task"]["output"]["response"] for t in order] == [
        "Finished step 1.", "Finished step 3.", "Finished step 4."]
    assert [len(shown[t["id"]]["executions"]) for t in order] == [1, 4, 1]
    # The failed check came back to the same agent as a second prompt carrying its output.
    executions = shown[checked["id"]]["executions"]
    feedback = of_kind(executions, "prompt")[1]["message"]
    assert "Your previous attempt was sent back. Fix this:\nFAIL: expected 42" in feedback, feedback
    assert [e["status"] for e in of_kind(executions, "command")] == ["failed", "success"], executions
    assert shown[checked["id"]]["task"]["verification_result"]["status"] == "passed"
    # What the model was asked, in queue order; nothing from the other plan.
    asked = prompts_received(fake)
    with pane.explained(f"the prompts the model got: {asked}", mark):
        assert len(asked) == 4, asked
        for prompt, t in zip(asked, [first, checked, checked, last]):
            assert f"Task: {t['title']}" in prompt and t["description"] in prompt, asked
        assert "expected 42" in asked[2] and "expected 42" not in asked[1], asked
    assert task_cli(server, "ls", "--state", "ready")["tasks"][0]["title"] == "Not in this plan"
