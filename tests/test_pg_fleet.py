"""A fleet: two real daemons (hosts alpha and beta, sockets of their own) on one PostgreSQL
database (issue 30). 1,000 tasks raced for by 20 clients on each daemon, claiming through its
socket as `muxd task` and the MCP tools do: each task has exactly one winner, none is lost, and its
claim event names the host it was claimed through. Leases run out by the database's clock and are
returned once, by whichever daemon's sweeper comes first; a daemon killed while holding claims
leaves them to the other's sweeper."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from collections.abc import Iterator

import pytest

from muxd.protocol.task_messages import ClaimTask, CreateTask, GetTask
from muxd.store.pg_connection import PgConnection
from muxd.store.pg_connection import connect as pg_connect
from muxd.testing.claim_race import create_tokens, race_fleet
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")

TASKS, WORKERS_PER_DAEMON = 1000, 20
HOSTS = ("alpha", "beta")
SWEPT_TIMEOUT_S = 15  # a sweeper looks every TASK_LEASE_SWEEP_S (1 s)


@pytest.fixture
def fleet(postgres_url: str) -> Iterator[tuple[MuxdTestServer, MuxdTestServer]]:
    """Daemons alpha and beta on one database (alpha migrates it; beta finds it migrated)."""
    servers = [MuxdTestServer(env={"MUXD_DB": postgres_url, "MUXD_HOST": host}) for host in HOSTS]
    try:
        for server in servers:
            server.start()
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PgConnection]:
    db = pg_connect(postgres_url)
    try:
        yield db
    finally:
        db.close()


def test_claims_race_across_two_daemons_with_exactly_one_winner_each(
        fleet: tuple[MuxdTestServer, MuxdTestServer], pg: PgConnection) -> None:
    alpha, beta = fleet
    daemons = [(server.socket_path, asyncio.run(create_tokens(server.socket_path, [
        f"{host}-{n}" for n in range(WORKERS_PER_DAEMON)]))) for server, host in zip(fleet, HOSTS)]
    result = asyncio.run(race_fleet(daemons, TASKS))
    won = [task for tasks in result.wins.values() for task in tasks]
    assert len(won) == TASKS and set(won) == set(result.created)         # none lost
    assert not [t for t, n in Counter(won).items() if n > 1]              # none claimed twice
    winner = {task: principal for principal, tasks in result.wins.items() for task in tasks}
    assert result.holders == winner                                       # the store agrees with every win
    assert len(result.wins) == 2 * WORKERS_PER_DAEMON and all(result.wins.values())  # they all raced
    assert result.lost_races > 0
    # Each task says the host it was created through; each daemon created half.
    assert Counter(result.hosts.values()) == {"alpha": TASKS // 2, "beta": TASKS // 2}
    # One claim event per task, naming the host of the daemon its winner claimed through.
    claims = pg.execute("SELECT task_id, actor, host FROM task_events WHERE kind = 'claimed'").fetchall()
    assert sorted(task for task, _, _ in claims) == sorted(result.created)
    assert all(actor == winner[task] and actor.startswith(f"token:{host}-") for task, actor, host in claims)
    assert {host for _, _, host in claims} == set(HOSTS)


async def _held(server: MuxdTestServer, token: str, count: int) -> list[str]:
    """`count` tasks created through `server` and claimed there by `token`'s worker (60 s leases)."""
    boss, worker = await server.client(), await server.client(token=token)
    try:
        ids = [(await boss.call(CreateTask, title=f"leased {n}")).task.id for n in range(count)]
        for task_id in ids:
            assert (await worker.call(ClaimTask, task_id=task_id, lease_s=60)).created
        return ids
    finally:
        await boss.close()
        await worker.close()


def _lapse(pg: PgConnection, ids: list[str]) -> None:
    """The leases of `ids` run out now, by the database's clock (no test waits a minute for one)."""
    pg.execute("UPDATE tasks SET lease_expires_at = extract(epoch FROM now()) - 1 WHERE id = ANY(?)", (ids,))


def _expiries(pg: PgConnection, ids: list[str]) -> list[tuple[str, str]]:
    return pg.execute("SELECT task_id, host FROM task_events WHERE kind = 'lease_expired' AND task_id = ANY(?)",
                      (ids,)).fetchall()


def _states(pg: PgConnection, ids: list[str]) -> set[str]:
    return {state for (state,) in pg.execute("SELECT state FROM tasks WHERE id = ANY(?)", (ids,))}


async def _state_through(server: MuxdTestServer, task_id: str) -> str:
    client = await server.client()
    try:
        return (await client.call(GetTask, task_id=task_id)).task.state
    finally:
        await client.close()


def test_leases_expire_once_whichever_daemon_sweeps_and_a_killed_daemons_claims_come_back(
        fleet: tuple[MuxdTestServer, MuxdTestServer], pg: PgConnection) -> None:
    alpha, beta = fleet
    [token] = asyncio.run(create_tokens(alpha.socket_path, ["alpha-worker"]))
    # Both sweepers alive: each lapsed lease is returned exactly once, by one of them.
    both = asyncio.run(_held(alpha, token, 40))
    _lapse(pg, both)
    wait_until(lambda: _states(pg, both) == {"ready"}, timeout=SWEPT_TIMEOUT_S, message="the leases returned")
    expired = _expiries(pg, both)
    assert sorted(task for task, _ in expired) == sorted(both) and {host for _, host in expired} <= set(HOSTS)
    # Alpha dies holding claims: beta's sweeper returns them once they lapse.
    orphans = asyncio.run(_held(alpha, token, 5))
    assert alpha.pid is not None
    os.kill(alpha.pid, signal.SIGKILL)
    wait_until(lambda: not alpha.running(), timeout=10, message="alpha gone")
    assert _states(pg, orphans) == {"claimed"}
    _lapse(pg, orphans)
    wait_until(lambda: _states(pg, orphans) == {"ready"}, timeout=SWEPT_TIMEOUT_S,
               message="beta's sweeper returns alpha's lapsed leases")
    assert sorted(_expiries(pg, orphans)) == sorted((task, "beta") for task in orphans)
    assert asyncio.run(_state_through(beta, orphans[0])) == "ready"
