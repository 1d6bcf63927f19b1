"""The web view's live update latency and the daemon's CPU with 10 browsers watching 50 panes,
against plain daemon connections subscribed to the same events in the same run.

    .venv/bin/python benchmarks/bench_web.py       # ~1.5 min on 2 cores
    .venv/bin/python benchmarks/bench_web.py --watchers 10 --panes 50 --agents 8 --rounds 12 [--same-token]
    .venv/bin/python benchmarks/bench_web.py --chromium   # and a phase of real browser tabs, ~3.5 min

A daemon holds `--panes` panes: `--agents` fake Claude agents (muxd/testing/fake_agents) and the
rest `sleep`. `muxd web` serves it. `--watchers` browsers watch the agents grid: each logs in
(its own token, as ten people would; `--same-token`: one token, so one shared feed) and reads
/events, the server-sent events a page's script reads (plain HTTP streams: ten headless
Chromiums would measure Chromium on a 2-core machine, not muxd). `--chromium` adds a phase of
the same rounds watched by one headless Chromium's `--watchers` tabs on the agents page
(_web_tabs.py: when each page's DOM showed the card waiting). Each round one agent (in turn)
is told `tool`: it spins, then asks for a yes, which the daemon publishes as an `agent-waiting`
event stamped with its time (`at`). Its dialog is then declined and the next round waits for
Idle.

- Latency: when each watcher's stream brought a grid showing that agent waiting, minus `at`;
  the peer: when each of as many plain daemon connections (`Subscribe(events=True)`, the least
  a client can do) got the event, minus `at`. One machine, one clock.
- CPU: the daemon's, and `muxd web`'s, over the rounds, as % of one core; the peer phase runs the
  same rounds with only the plain subscribers connected (the web view idle, nobody watching).
Printed: p50/p95 of each path and the web's over the peer's; CPU of both phases and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _peers import cpu_seconds, run_benchmark  # noqa: E402
from _report import fmt, latency_rows, machine_note, print_table, ratio  # noqa: E402
from _web_tabs import BrowserTabs  # noqa: E402

from muxd.client.connection import Client  # noqa: E402
from muxd.protocol.event_messages import DaemonEvent  # noqa: E402
from muxd.protocol.messages import NewSession, SendKeys, ShowPane, Spawn, Subscribe  # noqa: E402
from muxd.testing.fake_agent_panes import start_fake_agent  # noqa: E402
from muxd.testing.server import MuxdTestServer  # noqa: E402
from muxd.testing.wait import async_wait_until  # noqa: E402
from muxd.testing.web import WebClient, WebView, make_token  # noqa: E402

ROUND_TIMEOUT_S = 30.0


class Peer:
    """A plain subscriber: when each agent-waiting event reached it."""

    def __init__(self) -> None:
        self.arrived: dict[str, tuple[float, float]] = {}  # pane -> (event at, wall time received)

    def heard(self, event: object) -> None:
        if isinstance(event, DaemonEvent) and event.kind == "agent-waiting" and event.pane_id is not None:
            self.arrived[event.pane_id] = (event.at, time.time())


class Watcher:
    """One browser's event stream: when a grid showing each pane waiting first arrived."""

    def __init__(self, origin: str, cookies: dict[str, str]) -> None:
        self.origin = origin
        self.cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        self.waiting: dict[str, float] = {}  # pane -> wall time its waiting card arrived
        self.grids = 0
        self.task: asyncio.Task[None] | None = None

    def forget(self, pane: str) -> None:
        self.waiting.pop(pane, None)

    async def poll(self) -> None:
        """(A stream is read as it comes: nothing to ask.)"""

    def stamps(self, pane: str) -> list[float]:
        return [self.waiting[pane]]

    async def follow(self) -> None:
        host, port = self.origin.removeprefix("http://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {self.cookie}\r\n"
                     "Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        event, data = "", []
        try:
            while line := (await reader.readline()).decode():
                line = line.rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and event == "grid":
                    now = time.time()
                    self.grids += 1
                    for pane in re.findall(r'data-pane="(%\d+)" data-state="waiting"', "\n".join(data)):
                        self.waiting.setdefault(pane, now)
                    event, data = "", []
                elif not line:
                    event, data = "", []
        finally:
            writer.close()


async def add_sleeping_panes(client: Client, count: int) -> None:
    for n in range(count):
        await client.call(NewSession, name=f"idle{n}", spawn=Spawn(command=["sleep", "86400"]))


async def state_of(client: Client, pane: str) -> str:
    return (await client.call(ShowPane, target=pane)).pane.agent.activity.state


async def run_rounds(client: Client, agents: list[str], rounds: int, peers: list[Peer],
                     watchers: list[Watcher] | list[BrowserTabs]) -> tuple[list[float], list[float], float]:
    """`rounds` asks, each declined; the latencies (ms) of the peers and the watchers, and the seconds taken."""
    peer_ms: list[float] = []
    web_ms: list[float] = []
    started = time.monotonic()
    for n in range(rounds):
        pane = agents[n % len(agents)]
        for peer in peers:
            peer.arrived.pop(pane, None)
        for watcher in watchers:
            watcher.forget(pane)
        await client.call(SendKeys, target=pane, keys=["tool", "Enter"])
        await async_wait_until(lambda: _all_heard(pane, peers, watchers), timeout=ROUND_TIMEOUT_S,
                               message=f"every listener hearing {pane} wait", interval=0.01)
        at = peers[0].arrived[pane][0]
        peer_ms += [1000 * (p.arrived[pane][1] - at) for p in peers]
        web_ms += [1000 * (stamp - at) for w in watchers for stamp in w.stamps(pane)]
        await client.call(SendKeys, target=pane, keys=["Escape"])
        await async_wait_until(lambda: _is_idle(client, pane), timeout=ROUND_TIMEOUT_S, message=f"{pane} idle")
    return peer_ms, web_ms, time.monotonic() - started


async def _all_heard(pane: str, peers: list[Peer], watchers: list[Watcher] | list[BrowserTabs]) -> bool:
    for watcher in watchers:
        await watcher.poll()
    return all(pane in p.arrived for p in peers) and all(pane in w.waiting for w in watchers)


async def _is_idle(client: Client, pane: str) -> bool:
    return await state_of(client, pane) == "Idle"


def cpu(pids: dict[str, int]) -> dict[str, float]:
    return {name: cpu_seconds(pid) for name, pid in pids.items()}


async def bench(server: MuxdTestServer, view: WebView, args: argparse.Namespace, agents: list[str]) -> int:
    client = await server.client()
    pids = {"daemon": server.pid or 0, "web": view.process.pid}
    try:
        await add_sleeping_panes(client, args.panes - args.agents)
        peers = [Peer() for _ in range(args.watchers)]
        subscribers = [await server.client(on_event=p.heard) for p in peers]
        for subscriber in subscribers:
            await subscriber.call(Subscribe, events=True)
        # Phase 1, the peer: plain subscribers only.
        print(f"phase 1: {args.watchers} plain subscribers, {args.rounds} rounds …", flush=True)
        before = cpu(pids)
        peer_ms, _, took = await run_rounds(client, agents, args.rounds, peers, [])
        after = cpu(pids)
        plain_cpu = {name: 100 * (after[name] - before[name]) / took for name in pids}
        # Phase 2: the same rounds with the browsers watching (one plain subscriber kept for `at`).
        tokens = [make_token(server, "view_only", "bench-web")] * args.watchers if args.same_token else \
            [make_token(server, "view_only", f"bench-web{n}") for n in range(args.watchers)]
        watchers = []
        for token in tokens:
            web = WebClient(view.origin)
            assert web.login(token).status == 303
            watchers.append(Watcher(view.origin, web.cookies))
        for watcher in watchers:
            watcher.task = asyncio.ensure_future(watcher.follow())
        await async_wait_until(lambda: _all_drawn(watchers), timeout=ROUND_TIMEOUT_S, message="every first grid")
        for subscriber in subscribers[1:]:
            await subscriber.close()
        print(f"phase 2: {args.watchers} web watchers, {args.rounds} rounds …", flush=True)
        before = cpu(pids)
        _, web_ms, took = await run_rounds(client, agents, args.rounds, peers[:1], watchers)
        after = cpu(pids)
        web_cpu = {name: 100 * (after[name] - before[name]) / took for name in pids}
        grids = sum(w.grids for w in watchers)
        for watcher in watchers:
            assert watcher.task is not None
            watcher.task.cancel()
        tab_ms: list[float] = []
        tab_cpu: dict[str, float] = {}
        if args.chromium:
            # Phase 3: the same rounds watched by one Chromium's tabs (one session: the browser's cookie).
            print(f"phase 3: one headless Chromium, {args.watchers} tabs, {args.rounds} rounds …", flush=True)
            tabs = await asyncio.to_thread(BrowserTabs, view, make_token(server, "view_only", "bench-tabs"),
                                           args.watchers)
            try:
                before = cpu(pids)
                _, tab_ms, took = await run_rounds(client, agents, args.rounds, peers[:1], [tabs])
                after = cpu(pids)
                tab_cpu = {name: 100 * (after[name] - before[name]) / took for name in pids}
            finally:
                await asyncio.to_thread(tabs.close)
        await subscribers[0].close()
    finally:
        await client.close()
    print(f"\n{args.panes} panes ({args.agents} fake agents), {args.watchers} watchers "
          f"({'one token' if args.same_token else 'a token each'}), {args.rounds} rounds a phase")
    print(machine_note())
    print("\nlatency from the agent-waiting event's time to the listener (ms)")
    paths = {f"peer: {args.watchers} plain subscribers": peer_ms, f"web: {args.watchers} /events streams": web_ms}
    if tab_ms:
        paths[f"web: {args.watchers} Chromium tabs (page DOM)"] = tab_ms
    print_table(["path", "n", "p50", "p95", "max", "over peer p50"], latency_rows(paths, [_median(peer_ms)]))
    print(f"\nCPU over the rounds, % of one core ({grids} grids sent in phase 2; Chromium's own CPU not counted)")
    print_table(["process", "peer phase", "web phase", "web/peer", *(["tabs phase", "tabs/peer"] if tab_cpu else [])],
                [[name, fmt(plain_cpu[name]), fmt(web_cpu[name]), ratio(web_cpu[name], plain_cpu[name]),
                  *([fmt(tab_cpu[name]), ratio(tab_cpu[name], plain_cpu[name])] if tab_cpu else [])]
                 for name in pids])
    return 0


async def _all_drawn(watchers: list[Watcher]) -> bool:
    return all(w.grids for w in watchers)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panes", type=int, default=50)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--same-token", action="store_true", help="every watcher logs in with one token")
    parser.add_argument("--chromium", action="store_true",
                        help="a third phase: one headless Chromium with --watchers tabs on the agents page")
    args = parser.parse_args()
    server = MuxdTestServer().start()
    view = None
    try:
        print(f"starting {args.agents} fake agents …", flush=True)
        agents = [start_fake_agent(server, f"agent{n}") for n in range(args.agents)]
        view = WebView(server)
        return asyncio.run(bench(server, view, args, agents))
    finally:
        if view is not None:
            view.stop()
        server.stop()


if __name__ == "__main__":
    run_benchmark(main)
