"""Cost where the agent shows none, end to end: the real Claude Code, Codex and Gemini CLIs in
muxd panes, offline against the scripted fake model servers (which answer as the model the CLI
asked for), driven through `muxd mcp` by the real MCP SDK client. Each execution ends with
`cost_source: estimate`, the model the CLI used, the price date, and the dollars genai-prices
gives for the usage the fake server reported, request by request; the fleet's total is their
sum over the executions it covers. Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from muxd.testing.fake_models import AnthropicFake, GeminiFake, OpenAIResponsesFake, Say, Think
from muxd.testing.fake_models._http import FakeModelServer
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes
from muxd.testing.fake_models.script import RecordedRequest
from muxd.testing.mcp_stdio import call_ok, mcp_session

pytestmark = pytest.mark.agents

ANSWER = "Sure! Here is the answer from the scripted fake model, streamed to you word by word."
TURN_TIMEOUT_S = 60
WAIT_S = 25  # one wait_for call, within the MCP server's 30 s call timeout


@pytest.fixture
def agent(muxd_server, tmp_path) -> Iterator[Callable[..., AgentPane]]:
    panes = CliPanes(muxd_server, tmp_path, timeout=TURN_TIMEOUT_S, own_sessions=True)

    def run(cli: str, fake: FakeModelServer, *args: str) -> AgentPane:
        pane = panes.start(cli, fake, *args)
        if pane is None:
            pytest.skip(panes.missing)
        return pane

    yield run
    panes.close()


def usage_of(request: RecordedRequest) -> Usage:
    """The fake's reported usage in genai-prices' terms (input counts cache reads and writes)."""
    u: dict[str, Any] = request.usage or {}
    if "promptTokenCount" in u:  # Gemini
        return Usage(input_tokens=u["promptTokenCount"], output_tokens=u["candidatesTokenCount"])
    if "cache_creation_input_tokens" in u:  # Anthropic
        written, read = u["cache_creation_input_tokens"], u["cache_read_input_tokens"]
        return Usage(input_tokens=u["input_tokens"] + written + read, output_tokens=u["output_tokens"],
                     cache_read_tokens=read, cache_write_tokens=written)
    return Usage(input_tokens=u["input_tokens"], output_tokens=u["output_tokens"],  # OpenAI Responses
                 cache_read_tokens=u["input_tokens_details"]["cached_tokens"])


def expected_cost(requests: list[RecordedRequest], model: str, started_at: str) -> float:
    when = dt.datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    return float(sum((calc_price(usage_of(r), model, genai_request_timestamp=when).total_price
                      for r in requests if r.usage), Decimal(0)))


def model_of(request: RecordedRequest) -> str:
    """The model the CLI asked the fake for (and the fake answered as)."""
    if isinstance(request.body, dict) and request.body.get("model"):
        return str(request.body["model"])
    return request.path.split("/models/")[1].split(":")[0]  # Gemini names it in the path


async def finished(session, pane: AgentPane, execution_id: str) -> dict:
    waited = await call_ok(session, "wait_for", execution_id=execution_id, timeout_s=WAIT_S)
    if not waited["matched"]:
        print(pane.screen())
    assert waited["matched"], waited
    return (await call_ok(session, "get_execution_result", agent_name=pane.pane_id,
                          execution_id=execution_id))["execution"]


def assert_estimated(done: dict, fake: FakeModelServer) -> None:
    requests = fake.main_requests()
    model = model_of(requests[-1])
    assert done["status"] == "success" and done["response"] == ANSWER, done
    assert (done["cost_source"], done["cost_model"]) == ("estimate", model), done
    assert done["cost_price_date"] == done["started_at"][:10]
    assert done["cost_usd"] > 0 and done["sources"]["cost_usd"] == "session_log"
    assert done["cost_usd"] == pytest.approx(expected_cost(requests, model, done["started_at"]), abs=1e-6)


def test_claude_code_turn_is_priced_from_its_session_log(agent, muxd_server):
    fake = AnthropicFake([[Think(5, 0.05), Say(ANSWER, 0.03)]])
    pane = agent("claude", fake, "--permission-mode", "default")

    async def drive() -> dict:
        async with mcp_session(muxd_server) as session:
            sent = await call_ok(session, "send_task", pane_id=pane.pane_id, message="please answer")
            done = await finished(session, pane, sent["execution_id"])
            with pane.explained("the Claude Code turn's cost"):
                assert_estimated(done, fake)
            rows = (await call_ok(session, "list_recent_executions", agent_name=pane.pane_id))["executions"]
            assert [(r["cost_usd"], r["cost_source"]) for r in rows] == [(done["cost_usd"], "estimate")]
            fleet = (await call_ok(session, "get_agent_activity_summary"))["fleet_summary"]
            assert (fleet["total_cost_usd"], fleet["cost_known_executions"]) == (done["cost_usd"], 1)
            return done

    done = asyncio.run(drive())
    shown = muxd_server.cli("show", done["id"], check=True).stdout
    assert f"(estimate: {done['cost_model']} at the prices of {done['cost_price_date']})" in shown


def test_codex_and_gemini_turns_are_priced_and_summed(agent, muxd_server):
    codex_fake = OpenAIResponsesFake([[Think(5, 0.05), Say(ANSWER, 0.03)]])
    gemini_fake = GeminiFake([[Say(ANSWER, 0.03)]])
    codex = agent("codex", codex_fake, "--dangerously-bypass-approvals-and-sandbox")
    gemini = agent("gemini", gemini_fake, "--yolo")

    async def drive() -> None:
        async with mcp_session(muxd_server) as session:
            sent = [await call_ok(session, "send_task", pane_id=p.pane_id, message="please answer")
                    for p in (codex, gemini)]
            costs = []
            for pane, fake, one in ((codex, codex_fake, sent[0]), (gemini, gemini_fake, sent[1])):
                done = await finished(session, pane, one["execution_id"])
                with pane.explained(f"the {pane.pane_id} turn's cost"):
                    assert_estimated(done, fake)
                costs.append(done["cost_usd"])
            fleet = await call_ok(session, "get_agent_activity_summary")
            assert fleet["fleet_summary"]["cost_known_executions"] == 2
            assert fleet["fleet_summary"]["total_cost_usd"] == pytest.approx(sum(costs), abs=1e-6)
            by_agent = {row["agent_name"]: row for row in fleet["by_agent"]}
            assert [by_agent[p.pane_id]["cost_usd"] for p in (codex, gemini)] == costs

    asyncio.run(drive())
