"""How soon an MCP orchestrator blocked in `wait_for(attention=...)` hears that an agent asks for
a yes, against a plain daemon connection subscribed to the same event in the same run.

    .venv/bin/python benchmarks/bench_alert_latency_mcp.py                # ~1 min on 2 cores
    .venv/bin/python benchmarks/bench_alert_latency_mcp.py --rounds 60 --panes 5 --no-http

A daemon runs N fake Claude panes. Each round one of them (in turn) is told `tool`: it spins,
then draws a permission dialog, which the daemon's detectors turn into AwaitingConfirmation and
an `agent-waiting` event stamped with the time it was published (`at`). Three listeners wait
for it at once:
- the peer: a daemon connection of this process with `Subscribe(events=True,
  kinds=["agent-waiting"])`, the least any client can do;
- `wait_for(pane_id=[all N], attention="waiting", mode="any")` through `muxd mcp` over stdio,
  with the real SDK client;
- the same through `muxd mcp --http` (bearer token), unless --no-http.
The latency of each is the wall time it got the news minus the event's `at` (one machine,
one clock). The round's dialog is then declined and the next round waits for every pane to
be Idle. Printed: p50 and p95 of each, and of each MCP path over the peer (ratio and ms added).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from _report import fmt, print_table, ratio
from mcp import ClientSession

from muxd.protocol.event_messages import DaemonEvent
from muxd.protocol.messages import ListPanes, Subscribe
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.mcp_http import HttpMcp, create_token, stdio_session
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until

ROUNDS_DEFAULT = 30
PANES_DEFAULT = 3
ROUND_TIMEOUT_S = 30.0  # a wait's own timeout: far past what an agent takes to ask
# The benchmark measures latency, not the guards: no rate limit in its way.
UNLIMITED = {"MUXD_MCP_RATE": "1000000", "MUXD_MCP_BURST": "1000000"}


class Peer:
    """A plain subscriber: when each agent-waiting event reached this process."""

    def __init__(self) -> None:
        self.arrived: dict[tuple[str, float], float] = {}  # (pane, event at) -> wall time received

    def heard(self, event: Any) -> None:
        if isinstance(event, DaemonEvent) and event.kind == "agent-waiting" and event.pane_id is not None:
            self.arrived[(event.pane_id, event.at)] = time.time()


class Waiter:
    """One MCP path: a session whose wait_for is started before each round and read after it."""

    def __init__(self, name: str, session: ClientSession, panes: list[str]) -> None:
        self.name = name
        self.session = session
        self.panes = panes
        self.latencies_ms: list[float] = []
        self._started = asyncio.Event()
        self._task: asyncio.Task[tuple[dict[str, Any], float]] | None = None

    async def begin(self) -> None:
        """Start a wait and return once the server says it is waiting (its first progress notification)."""
        self._started = asyncio.Event()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            self._started.set()

        async def call() -> tuple[dict[str, Any], float]:
            result = await self.session.call_tool("wait_for", {
                "pane_id": self.panes, "attention": "waiting", "mode": "any", "timeout_s": ROUND_TIMEOUT_S},
                progress_callback=progress)
            received = time.time()
            assert not result.is_error, result.content
            return result.structured_content, received

        self._task = asyncio.ensure_future(call())
        waiting = asyncio.ensure_future(self._started.wait())
        await asyncio.wait({self._task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if self._task.done():
            raise AssertionError(f"{self.name}: wait_for returned before the round began: {self._task.result()}")

    async def end(self, pane: str) -> float:
        """The event's `at` this wait reported for `pane`; its latency recorded."""
        assert self._task is not None
        result, received = await self._task
        found = result["panes"]
        assert result["matched"] and found and found[0]["pane_id"] == pane, result
        at = float(found[0]["since"])
        self.latencies_ms.append((received - at) * 1000)
        return at


def percentile(values: list[float], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


async def _all_idle(client: Any, panes: list[str]) -> None:
    async def idle() -> bool:
        listed = (await client.call(ListPanes, all=True)).panes
        return all(p.agent.activity.state == "Idle" and p.attention != "waiting" for p in listed if p.id in panes)
    await async_wait_until(idle, timeout=ROUND_TIMEOUT_S, message="every agent idle")


@asynccontextmanager
async def _waiters(server: MuxdTestServer, panes: list[str], http: HttpMcp | None,
                   token: str | None) -> AsyncIterator[list[Waiter]]:
    async with AsyncExitStack() as stack:
        stdio = await stack.enter_async_context(stdio_session(server, **UNLIMITED))
        waiters = [Waiter("mcp stdio", stdio, panes)]
        if http is not None and token is not None:
            waiters.append(Waiter("mcp http", await stack.enter_async_context(http.session(token)), panes))
        yield waiters


async def measure(server: MuxdTestServer, panes: list[str], rounds: int, http: HttpMcp | None,
                  token: str | None) -> tuple[list[float], list[Waiter]]:
    peer = Peer()
    listener = await server.client(on_event=peer.heard)
    owner = await server.client()
    peer_ms: list[float] = []
    try:
        await listener.call(Subscribe, events=True, kinds=["agent-waiting"])
        async with _waiters(server, panes, http, token) as waiters:
            for number in range(rounds):
                pane = panes[number % len(panes)]
                await _all_idle(owner, panes)
                await asyncio.gather(*(w.begin() for w in waiters))
                server.cli("send-keys", "-t", pane, "tool", "Enter", check=True)
                ats = {await w.end(pane) for w in waiters}
                assert len(ats) == 1, f"the waits saw different events: {ats}"
                at = ats.pop()
                await async_wait_until(_arrived(peer, pane, at), timeout=ROUND_TIMEOUT_S, message="the peer's event")
                peer_ms.append((peer.arrived[(pane, at)] - at) * 1000)
                server.cli("send-keys", "-t", pane, "3", "Enter", check=True)  # No: the turn ends
        return peer_ms, waiters
    finally:
        await listener.close()
        await owner.close()


def _arrived(peer: Peer, pane: str, at: float) -> Callable[[], Awaitable[bool]]:
    async def arrived() -> bool:
        return (pane, at) in peer.arrived
    return arrived


def report(peer_ms: list[float], waiters: list[Waiter]) -> None:
    p50_peer, p95_peer = percentile(peer_ms, 50), percentile(peer_ms, 95)
    rows = [["daemon Subscribe (peer)", str(len(peer_ms)), fmt(p50_peer, " ms"), fmt(p95_peer, " ms"), "1.00x", "-"]]
    for w in waiters:
        p50, p95 = percentile(w.latencies_ms, 50), percentile(w.latencies_ms, 95)
        added = None if p50 is None or p50_peer is None else p50 - p50_peer
        rows.append([f"wait_for attention, {w.name}", str(len(w.latencies_ms)), fmt(p50, " ms"), fmt(p95, " ms"),
                     ratio(p50, p50_peer), fmt(added, " ms")])
    print("agent-waiting published -> heard (wall clock, same machine)")
    print_table(["listener", "rounds", "p50", "p95", "p50 vs peer", "p50 added"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS_DEFAULT)
    parser.add_argument("--panes", type=int, default=PANES_DEFAULT, help="fake agents the waits watch")
    parser.add_argument("--no-http", action="store_true", help="measure muxd mcp over stdio only")
    args = parser.parse_args()
    server = MuxdTestServer().start()
    http: HttpMcp | None = None
    try:
        panes = [start_fake_agent(server, f"bench{i}") for i in range(args.panes)]
        token = None
        if not args.no_http:
            token = create_token(server, "admin", "bench")
            http = HttpMcp(server)
        peer_ms, waiters = asyncio.run(measure(server, panes, args.rounds, http, token))
        report(peer_ms, waiters)
    finally:
        if http is not None:
            http.stop()
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
