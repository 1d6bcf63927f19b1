"""The fleet tables (store/fleet.py, PostgreSQL's migration 7; issue 30): heartbeats judged on the
database's clock, published panes read by the other hosts only, and a stale host taken over
exactly once however many daemons race for it, its running executions interrupted and nothing
else of it touched; its next start takes it back. One stale for long is forgotten once, its
history kept. And the publishing of a daemon's panes: a
flurry of state changes is a few writes (FLEET_PUBLISH_MIN_INTERVAL_S), the last state lands,
and a duration moving alone is never written."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from muxd.config import FLEET_FORGET_AFTER_S, FLEET_PUBLISH_MIN_INTERVAL_S
from muxd.daemon.work.fleet_presence import (
    TAKEN_OVER_ERROR, FleetPresence, forget_after_from_env, stale_after_from_env,
)
from muxd.errors import BadRequest
from muxd.executions.record import Execution
from muxd.store import fleet
from muxd.store.execution_rows import UPSERT, to_row
from muxd.protocol.pane_messages import (
    AgentSummary, PaneInfo, SummaryActivity, SummaryContext, SummarySession,
)
from muxd.store.database import Database
from muxd.store.opening import open_database
from muxd.store.pg_connection import PgConnection
from muxd.testing.wait import async_wait_until

NOW = 1_700_000_000.0
STALE_S = 30.0  # the bound these tests judge by: a heartbeat is made old (_age), never waited out
RACERS = 4


def _execution(n: int, status: str = "running") -> Execution:
    return Execution(id=f"exec_{n}_{n:08x}", pane_id="%1", pane_key=f"run/%{n}", agent_name="a", kind="prompt",
                     status=status, started_at=NOW + n)  # type: ignore[arg-type]


def _age(c: PgConnection, host: str, seconds: float) -> None:
    """Make `host`'s last heartbeat `seconds` old on the database's clock (no waiting)."""
    c.execute("UPDATE fleet_hosts SET beat_at = now() - make_interval(secs => ?) WHERE host = ?", (seconds, host))


def test_a_hosts_panes_are_read_by_the_others_and_go_with_it(connect_pg: Callable[..., PgConnection]) -> None:
    alpha, beta = connect_pg(host="alpha"), connect_pg(host="beta")
    for c in (alpha, beta):
        fleet.begin(c, 100, NOW)
    fleet.publish(beta, [("%1", "Idle", "claude", '{"id": "%1"}', '{"pane_id": "%1"}', NOW)], [])
    hosts, panes = fleet.read_fleet(alpha, STALE_S)
    assert [(h.host, h.stale) for h in hosts] == [("beta", False)]
    assert [(p.host, p.pane_id, p.state, p.observed_at) for p in panes] == [("beta", "%1", "Idle", NOW)]
    assert fleet.read_fleet(beta, STALE_S)[1] == []  # a host's own panes are its daemon's to tell, live
    fleet.publish(beta, [], ["%1"])
    assert fleet.read_fleet(alpha, STALE_S)[1] == []
    fleet.publish(beta, [("%2", "Thinking", "codex", "{}", "{}", NOW)], [])
    fleet.begin(beta, 101, NOW + 1)  # beta's next start: its last run's panes died with it
    assert fleet.read_fleet(alpha, STALE_S)[1] == []
    fleet.leave(beta)  # a clean stop: nothing of beta left to look stale
    assert fleet.read_fleet(alpha, STALE_S) == ([], [])


def test_a_stale_host_is_taken_over_once_however_many_race(connect_pg: Callable[..., PgConnection]) -> None:
    beta = connect_pg(host="beta")
    fleet.begin(beta, 100, NOW)
    for row in (_execution(1), _execution(2, "pending"), _execution(3, "success")):
        beta.execute(UPSERT, to_row(row))
    watchers = [connect_pg(host=f"w{n}") for n in range(RACERS)]
    fleet.begin(watchers[0], 200, NOW)
    watchers[0].execute(UPSERT, to_row(_execution(4)))  # a live host's running execution: never touched
    assert fleet.take_over_stale(watchers[0], STALE_S, NOW + 10, TAKEN_OVER_ERROR) == []  # beta beats: fresh
    _age(beta, "beta", STALE_S * 10)
    assert fleet.read_fleet(watchers[0], STALE_S)[0][0].stale
    together = threading.Barrier(RACERS)

    def race(c: PgConnection) -> list[tuple[str, int]]:
        together.wait()
        return fleet.take_over_stale(c, STALE_S, NOW + 10, TAKEN_OVER_ERROR)

    with ThreadPoolExecutor(RACERS) as pool:
        taken = [t for found in pool.map(race, watchers) for t in found]
    assert taken == [("beta", 2)]
    rows = beta.execute("SELECT id, status, error_type, duration_ms, completed_at FROM executions ORDER BY id").fetchall()
    assert rows == [("exec_1_00000001", "interrupted", "interrupted", 9000, NOW + 10),
                    ("exec_2_00000002", "interrupted", "interrupted", 8000, NOW + 10),
                    ("exec_3_00000003", "success", None, None, None),
                    ("exec_4_00000004", "running", None, None, None)]
    # The tallies' triggers saw it as any end: the interrupted count is the history's.
    assert beta.execute("SELECT n FROM execution_status_counts WHERE status = 'interrupted'").fetchone() == (2,)
    since = fleet.read_fleet(watchers[1], STALE_S)[0]
    assert [(h.host, h.stale_since is not None) for h in since if h.host == "beta"] == [("beta", True)]
    # Beta alive after all (its heartbeats could not be written): its next beat says it was taken over, once.
    assert fleet.beat(beta, 100, NOW, STALE_S) is True and fleet.beat(beta, 100, NOW, STALE_S) is False
    fleet.begin(beta, 101, time.time())  # beta again: fresh, unmarked, to be taken over anew if it dies again
    assert [(h.host, h.stale, h.stale_since) for h in fleet.read_fleet(watchers[1], STALE_S)[0]
            if h.host == "beta"] == [("beta", False, None)]


def test_a_host_stale_for_long_is_forgotten_once_its_history_kept(connect_pg: Callable[..., PgConnection]) -> None:
    beta = connect_pg(host="beta")
    fleet.begin(beta, 100, NOW)
    fleet.publish(beta, [("%1", "Idle", "claude", "{}", "{}", NOW)], [])
    beta.execute(UPSERT, to_row(_execution(1, "success")))
    watchers = [connect_pg(host=f"w{n}") for n in range(RACERS)]
    _age(beta, "beta", STALE_S * 10)
    assert fleet.forget_stale(watchers[0], STALE_S) == []  # stale, not taken over yet: kept until it is
    assert fleet.take_over_stale(watchers[0], STALE_S, NOW + 10, TAKEN_OVER_ERROR) == [("beta", 0)]
    assert fleet.forget_stale(watchers[0], STALE_S * 100) == []  # not that long
    together = threading.Barrier(RACERS)

    def race(c: PgConnection) -> list[str]:
        together.wait()
        return fleet.forget_stale(c, STALE_S * 5)

    with ThreadPoolExecutor(RACERS) as pool:
        assert [h for found in pool.map(race, watchers) for h in found] == ["beta"]
    assert fleet.read_fleet(watchers[1], STALE_S) == ([], [])
    assert beta.execute("SELECT count(*) FROM fleet_panes").fetchone() == (0,)
    assert beta.execute("SELECT id, status FROM executions").fetchall() == [("exec_1_00000001", "success")]
    fleet.begin(beta, 101, time.time())  # beta back after all: listed again
    assert [h.host for h in fleet.read_fleet(watchers[1], STALE_S)[0]] == ["beta"]


def test_the_forgetting_bound_comes_from_muxd_fleet_forget_s_never_below_the_stale_one() -> None:
    assert forget_after_from_env({"MUXD_FLEET_FORGET_S": "60"}, 15.0) == 60.0
    assert forget_after_from_env({"MUXD_FLEET_FORGET_S": "1"}, 15.0) == 15.0
    assert forget_after_from_env({}, 15.0) == FLEET_FORGET_AFTER_S == 86400.0
    with pytest.raises(BadRequest, match="MUXD_FLEET_FORGET_S must be a number of seconds above 0"):
        forget_after_from_env({"MUXD_FLEET_FORGET_S": "never"}, 15.0)


def test_the_staleness_bound_comes_from_muxd_fleet_stale_s() -> None:
    assert stale_after_from_env({"MUXD_FLEET_STALE_S": "2.5"}) == 2.5
    assert stale_after_from_env({}) == stale_after_from_env({"MUXD_FLEET_STALE_S": " "}) == 15.0
    for bad in ("0", "-1", "soon", "nan", "inf"):
        with pytest.raises(BadRequest, match="MUXD_FLEET_STALE_S must be a number of seconds above 0"):
            stale_after_from_env({"MUXD_FLEET_STALE_S": bad})


# ---------------------------------------------------------------- publishing (daemon/work/fleet_presence.py)

STATES = ("Thinking", "Generating", "ToolUse", "Idle")
CHANGES = 60
CHANGE_EVERY_S = 0.01  # an agent streaming a turn: far more changes than writes


def _pane(pane_id: str) -> PaneInfo:
    return PaneInfo(id=pane_id, session="s", session_id="$0", window=0, window_id="@0", window_name="w", index=0,
                    name="worker", tags=[], command=["claude"], pid=1, foreground="claude", cwd="/", width=80,
                    height=24, status="running", exit_code=None, created_at=NOW, title="", active=True)


def _summary(pane_id: str, state: str, duration_secs: int = 0) -> AgentSummary:
    return AgentSummary(pane_id=pane_id, agent_type="claude", is_agent=True,
                        activity=SummaryActivity(state=state, description=None, duration_secs=duration_secs),
                        session=SummarySession(id=None, model=None, tokens_used=None), recent_tools=[],
                        context=SummaryContext(is_awaiting_input=False, is_awaiting_confirmation=False, tags=[],
                                               cwd="/"))


def test_a_flurry_of_changes_is_a_few_writes_and_the_last_state_lands(postgres_url: str) -> None:
    db, reader = open_database(postgres_url, host="pub"), open_database(postgres_url, host="reader")
    now = {"%1": (_pane("%1"), _summary("%1", "Idle"))}
    writes = []
    run_soon = db.run_soon

    def counted(job):  # type: ignore[no-untyped-def]
        writes.append(job)
        return run_soon(job)

    async def run() -> float:
        presence = FleetPresence(db, lambda: dict(now), stale_after_s=30.0)
        await presence.open()
        db.run_soon = counted  # type: ignore[method-assign]  # from here on: the publishing writes
        began = time.monotonic()
        for n in range(CHANGES):
            now["%1"] = (_pane("%1"), _summary("%1", STATES[n % len(STATES)], duration_secs=n))
            presence.changed()
            await asyncio.sleep(CHANGE_EVERY_S)
        took = time.monotonic() - began
        last = STATES[(CHANGES - 1) % len(STATES)]
        await async_wait_until(lambda: _published(reader, last), message="the last state published")
        before = len(writes)
        now["%1"] = (_pane("%1"), _summary("%1", last, duration_secs=999))  # only its duration moved
        presence.changed()
        await async_wait_until(lambda: _published(reader, last), message="still the last state")
        assert len(writes) == before  # a duration alone is never a write: readers count it on
        presence.close()
        return took

    try:
        took = asyncio.run(run())
        assert 1 <= len(writes) <= took / FLEET_PUBLISH_MIN_INTERVAL_S + 2, (len(writes), took)
    finally:
        db.close()
        reader.close()


async def _published(reader: Database, state: str) -> bool:
    panes = (await reader.run(lambda c: fleet.read_fleet(c, 30.0)))[1]
    return [(p.host, p.pane_id, p.state) for p in panes] == [("pub", "%1", state)]
