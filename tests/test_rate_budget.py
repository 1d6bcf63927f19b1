"""Seed 004's rate limits per tier and category, with the remaining budget in every reply: each
tool result's `_meta["muxd/rate_limit"]` says how many calls are left, of what limit, whole
again when, and for which bucket (the tool's own, or its category's under the caller's tier); a
spent budget is a rate_limited error saying when to retry, which holds. Real daemon, `muxd mcp`
over stdio, the real MCP SDK client, tokens of real tiers."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from muxd.mcp_server.guards import RATE_LIMIT_META_KEY
from muxd.testing.mcp_http import create_token
from muxd.testing.mcp_stdio import mcp_session, result_text
from muxd.testing.patience import patient_wait_for, stretched
from muxd.testing.server import MuxdTestServer

# Tool buckets out of the way: the category budgets are what these calls spend.
NO_TOOL_LIMIT = {"MUXD_MCP_RATE": "1000", "MUXD_MCP_BURST": "1000"}


def budget(result) -> dict:
    assert result.meta is not None and RATE_LIMIT_META_KEY in result.meta, result
    return result.meta[RATE_LIMIT_META_KEY]


async def _tier_budgets(server: MuxdTestServer) -> None:
    viewer = create_token(server, "view_only", "viewer")
    async with mcp_session(server, MUXD_TOKEN=viewer, MUXD_MCP_TIER_RATES="view_only=3,admin=50",
                           **NO_TOOL_LIMIT) as session:
        tools = {t["name"]: t for t in (await session.call_tool("list_tools", {})).structured_content["tools"]}
        panes_category = tools["list_panes"]["category"]
        other = next(name for name, t in tools.items()
                     if t["category"] not in (panes_category, tools["list_tools"]["category"])
                     and t["risk"] == "safe" and name in ("list_agents", "list_recent_executions", "tasks_list"))

        told = []
        for _ in range(3):
            result = await session.call_tool("list_panes", {})
            assert not result.is_error, result_text(result)
            told.append(budget(result))
        assert [b["remaining"] for b in told] == [2, 1, 0]
        assert {(b["limit"], b["scope"], b["tier"]) for b in told} == {(3, f"category:{panes_category}", "view_only")}
        assert 0 < told[0]["reset_s"] <= 20.01 and told[-1]["reset_s"] > told[0]["reset_s"]  # 3 a minute: 20 s each

        refused = await session.call_tool("list_panes", {})
        assert refused.is_error and result_text(refused).startswith("rate_limited: list_panes: ")
        spent = budget(refused)
        assert spent["remaining"] == 0 and 0 < spent["retry_after_s"] <= 20.01
        assert f"retry after {spent['retry_after_s']} s" in result_text(refused)
        # The tier's budget is per category: another category still has all of its own.
        fresh = await session.call_tool(other, {})
        assert not fresh.is_error and budget(fresh)["remaining"] == 2, result_text(fresh)

    # The same limits, an admin token: the admin tier's budget.
    admin = create_token(server, "admin", "boss")
    async with mcp_session(server, MUXD_TOKEN=admin, MUXD_MCP_TIER_RATES="view_only=3,admin=50",
                           **NO_TOOL_LIMIT) as session:
        told = budget(await session.call_tool("list_panes", {}))
        assert (told["remaining"], told["limit"], told["tier"]) == (49, 50, "admin")


def test_each_tier_has_its_budget_per_category_in_every_result(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_tier_budgets(muxd_server), timeout=90))


async def _category_cap_and_retry(server: MuxdTestServer) -> None:
    # A tool's own bucket (seed 003's rate, lowered here to 1 call per 2 s, burst 5) binds before
    # the admin tier's category budget (1200 a minute).
    async with mcp_session(server, MUXD_MCP_RATE="0.5", MUXD_MCP_BURST="5") as session:
        told: list[dict] = []
        for _ in range(50):
            result = await session.call_tool("list_panes", {})
            if result.is_error:
                break
            told.append(budget(result))
        assert result.is_error and "rate_limited" in result_text(result)
        assert {(b["scope"], b["limit"], b["tier"]) for b in told} == {("tool:list_panes", 5, "admin")}
        assert told[0]["remaining"] == 4 and 5 <= len(told) < 50
        assert told[-1]["remaining"] == 0  # a result that said 1 or more is never followed by a refusal
        retry_s = budget(result)["retry_after_s"]
        assert 0 < retry_s <= 2.001
        await asyncio.sleep(retry_s)  # the behaviour under test: after the time it said, a call goes through
        again = await session.call_tool("list_panes", {})
        assert not again.is_error, result_text(again)

    # A category capped below every tier's budget.
    async with mcp_session(server, MUXD_MCP_CATEGORY_RATES="engine=2", **NO_TOOL_LIMIT) as session:
        first = budget(await session.call_tool("list_tools", {}))
        assert (first["remaining"], first["limit"], first["scope"]) == (1, 2, "category:engine")


def test_a_category_cap_and_a_retry_after_the_time_it_said(muxd_server: MuxdTestServer) -> None:
    asyncio.run(patient_wait_for(_category_cap_and_retry(muxd_server), timeout=90))


def test_bad_budgets_stop_muxd_mcp_with_one_line(muxd_server: MuxdTestServer) -> None:
    for variable, value, said in (("MUXD_MCP_TIER_RATES", "viewer=3", "tiers are view_only"),
                                  ("MUXD_MCP_TIER_RATES", "admin", "wants NAME=CALLS_PER_MINUTE"),
                                  ("MUXD_MCP_CATEGORY_RATES", "tasks=0", "must be 1..")):
        run = subprocess.run([sys.executable, "-m", "muxd", "-L", muxd_server.name, "mcp"],
                             env={**muxd_server.env, variable: value}, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=stretched(60))
        assert run.returncode == 1 and said in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
