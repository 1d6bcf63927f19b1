"""Seed 000's use cases with the real CLIs in muxd panes against scripted fake model servers,
driven through `muxd mcp` by the real MCP SDK client: an async task polled to its result (the
response is what the model streamed; tokens, tools, duration filled), failures that share a
stack_hash, cancel, a retried task by trace, a prompt typed by a person, waiting for all workers.
Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from muxd.testing.fake_models import (AnthropicFake, Call, Fail, GeminiFake, OpenAIChatFake, OpenAIResponsesFake, Say,
                                      Think, launch)
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes
from muxd.testing.fake_models.priced import assert_estimated
from muxd.testing.mcp_stdio import call_ok, mcp_session

pytestmark = pytest.mark.agents

ANSWER = "Sure! Here is the answer from the scripted fake model, streamed to you word by word."
TURN_TIMEOUT_S = 60
WAIT_S = 25  # one wait_for call, within the MCP server's 30 s call timeout

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"  # a W3C trace id: every attempt of one task


@pytest.fixture
def agent(muxd_server, tmp_path) -> Iterator[Callable[..., AgentPane]]:
    panes = CliPanes(muxd_server, tmp_path, timeout=TURN_TIMEOUT_S, own_sessions=True)
    yield panes.start_or_skip
    panes.close()


async def task(session, pane: AgentPane, message: str, **extra) -> dict:
    """send_task, then wait_for its end, then get_execution_result: seed 000 UC1."""
    sent = await call_ok(session, "send_task", pane_id=pane.pane_id, message=message, **extra)
    waited = await call_ok(session, "wait_for", execution_id=sent["execution_id"], timeout_s=WAIT_S)
    if not waited["matched"]:
        print(pane.screen())
    assert waited["matched"], waited
    return (await call_ok(session, "get_execution_result", agent_name=pane.pane_id,
                          execution_id=sent["execution_id"]))["execution"]


def usage_total(fake: FakeModelServer, before: int, *keys: str) -> int:
    return sum(sum(r.usage.get(k, 0) for k in keys) for r in fake.main_requests()[before:] if r.usage)


def test_claude_code_tasks_results_failures_and_retries(agent, muxd_server, tmp_path):
    work = tmp_path / "claude" / "work"
    fake = AnthropicFake([
        [Think(5, 0.05), Say(ANSWER, 0.03)],
        [Say("I will run a command.", 0.03), Call("Bash", {"command": "mkdir -p demo_dir", "description": "demo"})],
        [Say("Done.", 0.03)],
        [Fail(400, "credit balance is too low", times=1)],
        [Fail(400, "credit balance is too low", times=1)],
        [Say("Worked on the retry.", 0.03)],
    ])
    pane = agent("claude", fake, "--permission-mode", "default", "--allowedTools", "Bash")

    async def drive() -> None:
        async with mcp_session(muxd_server) as session:
            before = len(fake.main_requests())
            done = await task(session, pane, "please answer")
            assert done["status"] == "success" and done["response"] == ANSWER, done
            assert done["sources"]["response"] == "session_log" and done["session_id"]
            summary = await call_ok(session, "agent_summary", pane_id=pane.pane_id)
            assert summary["session"]["id"] == done["session_id"]  # from the log, between turns
            assert done["tokens_used"] == usage_total(fake, before, "input_tokens", "output_tokens",
                                                       "cache_creation_input_tokens", "cache_read_input_tokens")
            assert done["duration_seconds"] > 0.5
            last = [r.usage for r in fake.main_requests()[before:] if r.usage][-1]
            assert done["context_used"] == sum(last.get(k, 0) for k in (
                "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
            tooled = await task(session, pane, "make a dir")
            assert tooled["status"] == "success" and tooled["tool_calls"] == ["Bash(mkdir -p demo_dir)"]
            assert tooled["response"] == "I will run a command.\n\nDone." and (work / "demo_dir").is_dir()
            # Two identical API errors: failed, one pattern (UC2).
            first = await task(session, pane, "try it", trace_id=TRACE, attempt=1)
            second = await task(session, pane, "try it", trace_id=TRACE, attempt=2)
            assert first["status"] == second["status"] == "failed", (first, second)
            assert first["error"]["type"] == "api_error" and "credit balance" in first["error"]["message"].lower()
            assert first["sources"]["error"] == "session_log"
            assert first["error"]["stack_hash"] == second["error"]["stack_hash"]
            third = await task(session, pane, "try it", trace_id=TRACE, attempt=3)
            assert third["status"] == "success"
            trace = await call_ok(session, "tasks_by_trace", trace_id=TRACE)
            assert trace["retry_count"] == 2 and trace["final_status"] == "success"
            patterns = (await call_ok(session, "tasks_last_failed"))["error_patterns"]
            assert [p["count"] for p in patterns] == [2]
            health = await call_ok(session, "get_agent_activity_summary")
            assert health["fleet_summary"]["total_executions"] == 5 and health["fleet_summary"]["failed"] == 2

    asyncio.run(drive())


def test_codex_and_gemini_work_side_by_side_and_are_waited_for_together(agent, muxd_server):
    codex_fake = OpenAIResponsesFake([[Think(5, 0.05), Say(ANSWER, 0.03)]])
    gemini_fake = GeminiFake([[Say(ANSWER, 0.03)]])
    codex = agent("codex", codex_fake, "--dangerously-bypass-approvals-and-sandbox")
    gemini = agent("gemini", gemini_fake, "--yolo")

    async def drive() -> None:
        async with mcp_session(muxd_server) as session:
            sent = [await call_ok(session, "send_task", pane_id=p.pane_id, message="please answer")
                    for p in (codex, gemini)]
            waited = await call_ok(session, "wait_for", execution_id=[s["execution_id"] for s in sent],
                                   timeout_s=WAIT_S)
            assert waited["matched"] and {e["status"] for e in waited["executions"]} == {"success"}, waited
            costs = []
            for pane, fake, one in ((codex, codex_fake, sent[0]), (gemini, gemini_fake, sent[1])):
                done = (await call_ok(session, "get_execution_result", agent_name=pane.pane_id,
                                      execution_id=one["execution_id"]))["execution"]
                assert done["response"] == ANSWER, done
                assert done["tokens_used"] == usage_total(fake, 0, "total_tokens", "totalTokenCount"), done
                assert done["context_used"] == done["tokens_used"]  # one call: the whole context
                with pane.explained(f"the {pane.pane_id} turn's cost"):
                    assert_estimated(done, fake, ANSWER)  # neither CLI shows a cost: muxd's estimate
                costs.append(done["cost_usd"])
            codex_done = (await call_ok(session, "get_execution_result", agent_name=codex.pane_id,
                                        execution_id=sent[0]["execution_id"]))["execution"]
            assert codex_done["context_max"] and codex_done["sources"]["context_max"] == "session_log"
            fleet = await call_ok(session, "get_agent_activity_summary")
            if fleet["fleet_summary"]["success_rate"] != 100.0:  # say which rows the totals counted
                recent = await call_ok(session, "list_recent_executions", limit=10)
                raise AssertionError(f"{fleet['fleet_summary']}\n{recent}")
            assert fleet["fleet_summary"]["successful"] == 2
            assert fleet["fleet_summary"]["cost_known_executions"] == 2
            assert fleet["fleet_summary"]["total_cost_usd"] == pytest.approx(sum(costs), abs=1e-6)
            by_agent = {row["agent_name"]: row for row in fleet["by_agent"]}
            assert [by_agent[p.pane_id]["cost_usd"] for p in (codex, gemini)] == costs

    asyncio.run(drive())


def test_cancel_and_a_prompt_typed_by_a_person(agent, muxd_server):
    fake = AnthropicFake([[Think(200, 0.1), Say("too late", 0.03)], [Say("Now.", 0.03)], [Say(ANSWER, 0.03)]])
    pane = agent("claude", fake, "--permission-mode", "default")

    async def drive() -> None:
        async with mcp_session(muxd_server) as session:
            before = len(fake.main_requests())
            sent = await call_ok(session, "send_task", pane_id=pane.pane_id, message="think for long")
            pane.wait_for("Thinking", timeout=TURN_TIMEOUT_S)
            # Cancelled once the model has the request: its hooks tell the turn began before that,
            # and a turn cancelled sooner would leave the long reply to the next prompt.
            fake.wait_for_main_requests(before + 1, timeout=TURN_TIMEOUT_S)
            cancelled = await call_ok(session, "cancel_execution", execution_id=sent["execution_id"])
            assert cancelled["status"] == "cancelled"
            pane.settles_at("Idle", timeout=TURN_TIMEOUT_S)
            # Claude Code puts an interrupted prompt back in its input box: the next task must not
            # be typed after it.
            retried = await call_ok(session, "send_task", pane_id=pane.pane_id, message="answer now", wait=True,
                                    wait_timeout_s=WAIT_S)
            assert retried["execution"]["status"] == "success", retried
            assert "think for longanswer now" not in pane.screen()
            pane.submit("typed by a person")  # send-keys, as a person at the keyboard
            async def manual() -> dict | None:
                rows = (await call_ok(session, "list_recent_executions", triggered_by="manual"))["executions"]
                return rows[0] if rows and rows[0]["status"] == "success" else None

            from muxd.testing.wait import async_wait_until

            row = await async_wait_until(manual, timeout=TURN_TIMEOUT_S, interval=0.5, message="manual execution")
            done = (await call_ok(session, "get_execution_result", agent_name=pane.pane_id,
                                  execution_id=row["id"]))["execution"]
            assert done["message"] == "typed by a person" and done["response"] == ANSWER, done

    asyncio.run(drive())


def test_aider_task_result_from_its_chat_history(agent, muxd_server):
    fake = OpenAIChatFake([[Say(ANSWER, 0.03)]])
    pane = agent("aider", fake)

    async def drive() -> None:
        async with mcp_session(muxd_server) as session:
            done = await task(session, pane, "please answer", task_id="t-aider")
            assert done["status"] == "success" and done["response"] == ANSWER, done
            assert done["sources"]["response"] == "session_log" and done["tokens_used"], done
            listed = await call_ok(session, "tasks_list", task_id="t-aider")
            assert listed["total"] == 1 and listed["executions"][0]["status"] == "success"

    asyncio.run(drive())


def test_cline_task_result_from_its_session_store(agent, muxd_server, tmp_path):
    """Cline's turns from its messages file, found through its sessions database (issue 32)."""
    fake = OpenAIChatFake([
        [Say(ANSWER, 0.03)],
        [Call("run_commands", {"commands": ["mkdir -p demo_dir"]})],
        [Say("Done.", 0.03)],
        [Fail(401, "fake failure")],
    ])
    pane = agent("cline", fake, "--auto-approve", "true")

    async def drive() -> None:
        async with mcp_session(muxd_server) as session:
            before = len(fake.main_requests())
            done = await task(session, pane, "please answer")
            assert done["status"] == "success" and done["response"] == ANSWER, done
            assert done["sources"]["response"] == "session_log" and done["session_id"], done
            assert done["tokens_used"] == usage_total(fake, before, "prompt_tokens", "completion_tokens")
            last = [r.usage for r in fake.main_requests()[before:] if r.usage][-1]
            assert done["context_used"] == last["prompt_tokens"] + last["completion_tokens"], done
            before = len(fake.main_requests())
            tooled = await task(session, pane, "make a dir")
            assert tooled["status"] == "success" and tooled["tool_calls"] == ["run_commands(mkdir -p demo_dir)"]
            assert tooled["response"] == "Done." and (tmp_path / "cline" / "work" / "demo_dir").is_dir()
            assert tooled["tokens_used"] == usage_total(fake, before, "prompt_tokens", "completion_tokens")
            assert tooled["session_id"] == done["session_id"], "one Cline session"
            failed = await task(session, pane, "fail now")
            assert failed["status"] == "failed" and failed["error"]["message"] == "fake failure", failed
            assert failed["sources"]["error"] == "session_log"

    asyncio.run(drive())



def test_kilo_task_result_from_its_database(muxd_server, tmp_path):
    """Kilo's turns from the rows of its kilo.db, the session of the pane's cwd (issue 32)."""
    bin_dir, why = launch.find_cli("kilo")
    if bin_dir is None:
        pytest.skip(why)
    fake = OpenAIChatFake([[Say(ANSWER, 0.03)], [Say("A second answer.", 0.03)]])

    async def drive(pane: AgentPane) -> None:
        async with mcp_session(muxd_server) as session:
            for prompt, answer in (("please answer", ANSWER), ("once more", "A second answer.")):
                before = len(fake.main_requests())
                done = await task(session, pane, prompt)
                assert done["status"] == "success" and done["response"] == answer, done
                assert done["sources"]["response"] == "session_log" and done["session_id"].startswith("ses_"), done
                assert done["tokens_used"] == usage_total(fake, before, "prompt_tokens", "completion_tokens"), done

    with fake:
        pane = AgentPane(muxd_server, launch.kilo(tmp_path, fake.url, bin_dir))
        try:
            # Kilo names no model until it answers: its prompt is enough.
            pane.start().wait_for("Idle", timeout=TURN_TIMEOUT_S, what="Kilo at its prompt")
            asyncio.run(drive(pane))
        finally:
            pane.close()
