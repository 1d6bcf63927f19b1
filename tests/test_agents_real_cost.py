"""Cost where the agent shows none, end to end: the real Claude Code CLI in a muxd pane
(Codex and Gemini CLI: test_agents_real_executions.py's side-by-side turns), offline against
the scripted fake model servers (which answer as the model the CLI asked for), driven through `muxd mcp` by the real MCP SDK client. Each execution ends with
`cost_source: estimate`, the model the CLI used, the price date, and the dollars genai-prices
gives for the usage the fake server reported, request by request; the fleet's total is their
sum over the executions it covers. Needs `.ci/install-agents`; skips a CLI that is not installed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from muxd.testing.fake_models import AnthropicFake, Say, Think
from muxd.testing.fake_models.agent_pane import AgentPane, CliPanes
from muxd.testing.fake_models.priced import assert_estimated
from muxd.testing.mcp_stdio import call_ok, mcp_session

pytestmark = pytest.mark.agents

ANSWER = "Sure! Here is the answer from the scripted fake model, streamed to you word by word."
TURN_TIMEOUT_S = 60
WAIT_S = 25  # one wait_for call, within the MCP server's 30 s call timeout


@pytest.fixture
def agent(muxd_server, tmp_path) -> Iterator[Callable[..., AgentPane]]:
    panes = CliPanes(muxd_server, tmp_path, timeout=TURN_TIMEOUT_S, own_sessions=True)
    yield panes.start_or_skip
    panes.close()


async def finished(session, pane: AgentPane, execution_id: str) -> dict:
    waited = await call_ok(session, "wait_for", execution_id=execution_id, timeout_s=WAIT_S)
    if not waited["matched"]:
        print(pane.screen())
    assert waited["matched"], waited
    return (await call_ok(session, "get_execution_result", agent_name=pane.pane_id,
                          execution_id=execution_id))["execution"]


def test_claude_code_turn_is_priced_from_its_session_log(agent, muxd_server):
    fake = AnthropicFake([[Think(5, 0.05), Say(ANSWER, 0.03)]])
    pane = agent("claude", fake, "--permission-mode", "default")

    async def drive() -> dict:
        async with mcp_session(muxd_server) as session:
            sent = await call_ok(session, "send_task", pane_id=pane.pane_id, message="please answer")
            done = await finished(session, pane, sent["execution_id"])
            with pane.explained("the Claude Code turn's cost"):
                assert_estimated(done, fake, ANSWER)
            rows = (await call_ok(session, "list_recent_executions", agent_name=pane.pane_id))["executions"]
            assert [(r["cost_usd"], r["cost_source"]) for r in rows] == [(done["cost_usd"], "estimate")]
            fleet = (await call_ok(session, "get_agent_activity_summary"))["fleet_summary"]
            assert (fleet["total_cost_usd"], fleet["cost_known_executions"]) == (done["cost_usd"], 1)
            return done

    done = asyncio.run(drive())
    shown = muxd_server.cli("show", done["id"], check=True).stdout
    assert f"(estimate: {done['cost_model']} at the prices of {done['cost_price_date']})" in shown
