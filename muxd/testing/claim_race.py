"""Many workers racing for one queue through the daemon socket (the test of the claim CAS and
the claims-per-second benchmark share it): each worker is its own connection with its own
token, looping get-next-actionable → claim until nothing is left. `race_fleet` runs it across
several daemons sharing one PostgreSQL database, each daemon's workers claiming through it.
`race_connections` runs the same race on the store itself, a thread and a database connection
per worker (SQLite's file, or PostgreSQL's server as several daemons would share it)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muxd.client.connection import Client
from muxd.errors import TaskAlreadyClaimed
from muxd.protocol.access_messages import CreateToken
from muxd.protocol.task_messages import ClaimTask, CreateTask, ListTasks, NextActionable
from muxd.store import task_store

NEXT_BATCH = 20


@dataclass
class RaceResult:
    created: list[str]
    wins: dict[str, list[str]] = field(default_factory=dict)   # principal -> task ids it won
    lost_races: int = 0                                          # claims refused: someone was first
    seconds: float = 0.0
    holders: dict[str, str | None] = field(default_factory=dict)  # task id -> claimed_by, read back after
    hosts: dict[str, str | None] = field(default_factory=dict)    # task id -> the host it was created through

    @property
    def claims(self) -> int:
        return sum(len(won) for won in self.wins.values())


async def create_tasks(socket: Path | str, count: int, plan: str, first: int = 0) -> list[str]:
    """`count` tasks in `plan` created through the daemon at `socket`, numbered from `first`."""
    client = await Client.connect(socket)
    try:
        return [(await client.call(CreateTask, title=f"race task {i}", plan=plan, priority=i % 7)).task.id
                for i in range(first, first + count)]
    finally:
        await client.close()


async def create_tokens(socket: Path | str, names: list[str], tier: str = "execute_advanced") -> list[str]:
    """The secrets of new tokens named `names` (one connection, not a `muxd token create` each)."""
    client = await Client.connect(socket)
    try:
        return [(await client.call(CreateToken, tier=tier, name=name)).secret for name in names]
    finally:
        await client.close()


async def _worker(socket: Path | str, token: str, plan: str, result: RaceResult, seed: int) -> None:
    client = await Client.connect(socket, token=token)
    shuffle = random.Random(seed).shuffle
    principal = client.welcome.principal if client.welcome else token
    won = result.wins.setdefault(principal, [])
    try:
        while True:
            ready = (await client.call(NextActionable, limit=NEXT_BATCH, plan=plan)).actionable
            if not ready:
                return
            ids = [item.task.id for item in ready]
            shuffle(ids)
            for task_id in ids:
                try:
                    reply = await client.call(ClaimTask, task_id=task_id)
                except TaskAlreadyClaimed:
                    result.lost_races += 1
                    continue
                if reply.created:
                    won.append(task_id)
                    break
    finally:
        await client.close()


async def race(socket: Path | str, tokens: list[str], count: int, plan: str = "race") -> RaceResult:
    """Create `count` tasks in `plan`, let one worker per token race for them, read the holders back."""
    return await race_fleet([(socket, tokens)], count, plan)


async def race_fleet(daemons: Sequence[tuple[Path | str, list[str]]], count: int, plan: str = "race") -> RaceResult:
    """`race` across daemons sharing one database: each (socket, tokens) daemon creates its share
    of the `count` tasks, and its tokens' workers claim through it; the holders and the hosts the
    tasks were created through are read back through the first."""
    shares = [count // len(daemons) + (n < count % len(daemons)) for n in range(len(daemons))]
    firsts = [sum(shares[:n]) for n in range(len(daemons))]
    made = await asyncio.gather(*(create_tasks(socket, share, plan, first)
                                  for (socket, _), share, first in zip(daemons, shares, firsts)))
    result = RaceResult(created=[task for tasks in made for task in tasks])
    workers = [(socket, token) for socket, tokens in daemons for token in tokens]
    started = time.perf_counter()
    await asyncio.gather(*(_worker(socket, token, plan, result, seed) for seed, (socket, token) in enumerate(workers)))
    result.seconds = time.perf_counter() - started
    client = await Client.connect(daemons[0][0])
    try:
        offset = 0
        while True:
            page = await client.call(ListTasks, plan=plan, limit=100, offset=offset)
            for task in page.tasks:
                result.holders[task.id] = task.claimed_by
                result.hosts[task.id] = task.host
            offset += len(page.tasks)
            if not page.tasks or offset >= page.total:
                break
    finally:
        await client.close()
    return result


@dataclass
class ConnectionRace:
    wins: list[list[str]]   # per worker N (agent:%N): the task ids it won
    lost_races: int         # claims refused: someone was first


def race_connections(connect: Callable[[], Any], workers: int, *, now: float, lease_s: int = 900,
                     claim_next: bool = False) -> ConnectionRace:
    """`workers` threads started together, each with a connection of its own (`connect()`) as
    agent:%N, looping next_actionable → claim (in an order of its own) until no task is ready;
    `claim_next`: looping task_store.claim_next instead."""
    start = threading.Barrier(workers)
    lost: list[int] = [0] * workers

    def work(n: int) -> list[str]:
        db, agent, shuffle = connect(), f"agent:%{n}", random.Random(n).shuffle
        won: list[str] = []
        start.wait()
        while claim_next and (task := task_store.claim_next(db, agent, lease_s, now)) is not None:
            won.append(task.id)
        while not claim_next and (candidates := task_store.next_actionable(db, plan=None, priority_lte=None,
                                                                           limit=NEXT_BATCH, now=now)):
            shuffle(candidates)
            for task in candidates:
                try:
                    claimed, fresh = task_store.claim(db, task.id, agent, lease_s, now)
                except TaskAlreadyClaimed:
                    lost[n] += 1
                    continue
                assert fresh and claimed.claimed_by == agent, (fresh, claimed.claimed_by, agent)
                won.append(task.id)
        return won

    with ThreadPoolExecutor(workers) as pool:
        wins = list(pool.map(work, range(workers)))
    return ConnectionRace(wins, sum(lost))
