"""A sum over unknown costs is unknown: the history's totals add only the executions whose cost is
known (the agent's figure or muxd's estimate), say how many that is (`cost_known_executions`),
and are null, not 0.0, when none is known: in the store's stats, in get_agent_activity_summary
through the real MCP SDK client, and in `muxd stats` / `history` / `show`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from muxd.executions.record import Execution
from muxd.mcp_server.execution_views import cost_sum
from muxd.store.database import Database
from muxd.store.execution_store import ExecutionQuery
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.mcp_stdio import call_ok, mcp_session
from muxd.testing.server import MuxdTestServer

NOW = time.time()


def ended(n: int, agent: str, **cost: object) -> Execution:
    return Execution(id=f"exec_{int(NOW * 1000) - n}_{n:08x}", pane_id="%9", pane_key=f"old/%{n}", agent_name=agent,
                     agent_type="claude", status="success", started_at=NOW - 600 + n, completed_at=NOW - 590 + n,
                     duration_ms=10_000, message=f"task {n}", **cost)  # type: ignore[arg-type]


ESTIMATED = ended(1, "priced", cost_usd=0.5, cost_source="estimate", cost_model="claude-opus-5-5",
                  cost_price_date="2026-11-28", sources={"cost_usd": "session_log"})
SHOWN = ended(2, "priced", cost_usd=0.25, cost_source="agent", sources={"cost_usd": "screen"})
UNKNOWN = ended(3, "priced")  # a turn whose model the price table does not know
ROWS = [ESTIMATED, SHOWN, UNKNOWN, ended(4, "unpriced"), ended(5, "unpriced")]


def seed(path: Path, rows: list[Execution]) -> None:
    async def save() -> None:
        db = Database(str(path))
        store = SqliteExecutionStore(db)
        try:
            await store.save_many([(row, None) for row in rows])
        finally:
            store.close()
            db.close()
    asyncio.run(save())


def test_the_stores_sums_cover_only_known_costs(tmp_path):
    seed(tmp_path / "h.db", ROWS)

    async def read() -> None:
        db = Database(str(tmp_path / "h.db"))
        store = SqliteExecutionStore(db)
        try:
            priced, unpriced = await store.stats(ExecutionQuery())
        finally:
            store.close()
            db.close()
        assert (priced.agent_name, priced.total) == ("priced", 3)
        assert (priced.total_cost_usd, priced.cost_known_executions) == (pytest.approx(0.75), 2)
        assert (unpriced.total_cost_usd, unpriced.cost_known_executions) == (None, 0)
        assert cost_sum([priced, unpriced]) == {"total_cost_usd": 0.75, "cost_known_executions": 2}
        assert cost_sum([unpriced]) == {"total_cost_usd": None, "cost_known_executions": 0}
        assert cost_sum([]) == {"total_cost_usd": None, "cost_known_executions": 0}
    asyncio.run(read())


@pytest.fixture
def seeded_server(tmp_path) -> Iterator[MuxdTestServer]:
    seed(tmp_path / "history.db", ROWS)
    server = MuxdTestServer(env={"MUXD_DB": str(tmp_path / "history.db")}).start()
    try:
        yield server
    finally:
        server.stop()


def test_the_mcp_summary_says_unknown_not_zero(seeded_server):
    async def check() -> None:
        async with mcp_session(seeded_server) as session:
            fleet = await call_ok(session, "get_agent_activity_summary")
            totals = fleet["fleet_summary"]
            assert (totals["total_cost_usd"], totals["cost_known_executions"]) == (0.75, 2)
            assert totals["total_executions"] == 5
            by_agent = {row["agent_name"]: row for row in fleet["by_agent"]}
            assert (by_agent["priced"]["cost_usd"], by_agent["priced"]["cost_known_executions"]) == (0.75, 2)
            assert (by_agent["unpriced"]["cost_usd"], by_agent["unpriced"]["cost_known_executions"]) == (None, 0)
            one = (await call_ok(session, "get_agent_activity_summary", agent_name="unpriced"))["summary"]
            assert (one["total_cost_usd"], one["cost_known_executions"]) == (None, 0)
            one = (await call_ok(session, "get_agent_activity_summary", agent_name="priced"))["summary"]
            assert (one["total_cost_usd"], one["cost_known_executions"]) == (0.75, 2)

            rows = (await call_ok(session, "list_recent_executions", agent_name="priced"))["executions"]
            assert {row["id"]: (row["cost_usd"], row["cost_source"]) for row in rows} == {
                ESTIMATED.id: (0.5, "estimate"), SHOWN.id: (0.25, "agent"), UNKNOWN.id: (None, None)}
            detail = (await call_ok(session, "get_execution_result", agent_name="priced",
                                    execution_id=ESTIMATED.id))["execution"]
            assert (detail["cost_usd"], detail["cost_source"], detail["cost_model"], detail["cost_price_date"]) == \
                (0.5, "estimate", "claude-opus-5-5", "2026-11-28")
            detail = (await call_ok(session, "get_execution_result", agent_name="priced",
                                    execution_id=UNKNOWN.id))["execution"]
            assert (detail["cost_usd"], detail["cost_source"], detail["cost_model"], detail["cost_price_date"]) == \
                (None, None, None, None)
    asyncio.run(check())


def test_the_cli_shows_estimates_and_leaves_unknown_blank(seeded_server):
    stats = seeded_server.cli("stats", check=True).stdout
    priced = next(line for line in stats.splitlines() if line.startswith("priced"))
    unpriced = next(line for line in stats.splitlines() if line.startswith("unpriced"))
    assert "$0.7500 (2/3)" in priced
    assert "$" not in unpriced and "0.0000" not in unpriced
    history = seeded_server.cli("history", "--agent", "priced", check=True).stdout
    assert "~$0.5000" in history and "$0.2500" in history and "~$0.2500" not in history
    show = seeded_server.cli("show", ESTIMATED.id, check=True).stdout
    assert "$0.500000 (estimate: claude-opus-5-5 at the prices of 2026-11-28)" in show
    assert "$0.250000 (agent)" in seeded_server.cli("show", SHOWN.id, check=True).stdout
