"""1,000 tasks claimed by 20 concurrent clients through the daemon: every task has exactly one
winner, none is lost, none is claimed twice (seed 001: the CAS is the chokepoint)."""

from __future__ import annotations

import asyncio
from collections import Counter

from muxd.testing.claim_race import race
from muxd.testing.mcp_http import create_token

TASKS, WORKERS = 1000, 20


def test_every_task_has_exactly_one_winner(muxd_server):
    tokens = [create_token(muxd_server, "execute_advanced", f"worker-{i}") for i in range(WORKERS)]
    result = asyncio.run(race(muxd_server.socket_path, tokens, TASKS))
    won = [task for tasks in result.wins.values() for task in tasks]
    assert len(won) == TASKS and set(won) == set(result.created)         # none lost
    assert not [t for t, n in Counter(won).items() if n > 1]              # none claimed twice
    winner = {task: principal for principal, tasks in result.wins.items() for task in tasks}
    assert result.holders == winner                                       # the store agrees with every win
    assert len(result.wins) == WORKERS and all(result.wins.values())      # they really raced
    assert result.lost_races > 0
