"""`muxd top`'s CPU with 100 panes, against procps `top -d 1` measured in the same run.

A private daemon holds `--panes` panes (default 100): `--agents` fake agents (default 6, the fake
Claude of muxd/testing/fake_agents) and the rest `sleep`. `muxd top` runs in a real terminal, a
pane of a private tmux server (120x40), and so does the peer, procps `top -d 1`, at the same size
and over the same seconds. Two phases of `--seconds` each:

- rest: nothing happens; muxd top only moves its times on, once a second;
- agents at work: every `--every` seconds one fake agent gets a prompt (Idle -> Thinking ->
  Idle, with agent-state, agent-idle and execution-finished events), so top reads the panes
  and executions again and redraws.

The peer: procps `top` is the live terminal view people keep open, redrawing a full-screen
table once a second, the same refresh as muxd top's tick; it reads /proc for every process
each time, where muxd top only reads the daemon when an event says something changed. Its
figure says what "a light live view" costs on this machine. CPU is utime+stime from /proc of
each process tree (the pane's shell and its children). The budget is 2 % of one core.

    .venv/bin/python benchmarks/bench_top.py [--panes 100] [--agents 6] [--seconds 20] [--every 2]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _peers import children, cpu_seconds, run_benchmark  # noqa: E402
from _report import print_table, ratio  # noqa: E402

from muxd.protocol.messages import NewSession, Spawn  # noqa: E402
from muxd.testing.fake_agent_panes import start_fake_agent  # noqa: E402
from muxd.testing.outer_terminal import OuterTerminal, muxd_command  # noqa: E402
from muxd.testing.server import MuxdTestServer  # noqa: E402

BUDGET_PCT = 2.0
COLUMNS, LINES = 120, 40
SHOWN_TIMEOUT_S = 60.0


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every process under it."""
    total, todo = 0.0, [pid]
    while todo:
        at = todo.pop()
        try:
            total += cpu_seconds(at)
        except OSError:
            continue  # gone meanwhile
        todo += children(at)
    return total


async def add_idle_panes(server: MuxdTestServer, count: int) -> None:
    client = await server.client()
    try:
        for n in range(count):
            await client.call(NewSession, name=f"idle{n}", spawn=Spawn(command=["sleep", "86400"]))
    finally:
        await client.close()


def measure(pids: dict[str, int], seconds: float) -> dict[str, float]:
    """Each tree's CPU over `seconds`, as % of one core."""
    before = {name: tree_cpu(pid) for name, pid in pids.items()}
    start = time.monotonic()
    time.sleep(seconds)  # the measuring window itself, not a synchronisation
    took = time.monotonic() - start
    return {name: 100 * (tree_cpu(pid) - before[name]) / took for name, pid in pids.items()}


def prompts(server: MuxdTestServer, agents: list[str], every: float, stop: threading.Event) -> None:
    """One prompt every `every` seconds, to each agent in turn, until `stop`."""
    turn = 0
    while not stop.wait(every):
        server.cli("send-keys", "-t", agents[turn % len(agents)], "hello", "Enter")
        turn += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panes", type=int, default=100)
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between prompts while agents work")
    args = parser.parse_args()
    if shutil.which("top") is None or shutil.which("tmux") is None:
        print("needs tmux and procps top", file=sys.stderr)
        return 2
    server = MuxdTestServer().start()
    terminals: list[OuterTerminal] = []
    try:
        print(f"starting {args.agents} fake agents and {args.panes - args.agents} sleeping panes …", flush=True)
        agents = [start_fake_agent(server, f"agent{n}") for n in range(args.agents)]
        asyncio.run(add_idle_panes(server, args.panes - args.agents))
        muxd_top = OuterTerminal(server.env, columns=COLUMNS, lines=LINES, command=muxd_command(server.name, "top"))
        terminals.append(muxd_top)
        peer = OuterTerminal(server.env, columns=COLUMNS, lines=LINES, command="top -d 1")
        terminals.append(peer)
        muxd_top.wait_for(f"{args.agents} agents", timeout=SHOWN_TIMEOUT_S)
        peer.wait_for("load average", timeout=SHOWN_TIMEOUT_S)
        pids = {"muxd top": muxd_top.pane_pid(), "top -d 1": peer.pane_pid(), "daemon": server.pid or 0}
        time.sleep(2)  # both past their first frames before the window opens
        rows = []
        print(f"phase 1: rest, {args.seconds:g} s …", flush=True)
        rest = measure(pids, args.seconds)
        rows.append(["rest", f"{rest['muxd top']:.2f}", f"{rest['top -d 1']:.2f}",
                     ratio(rest["muxd top"], rest["top -d 1"]), f"{rest['daemon']:.2f}",
                     "ok" if rest["muxd top"] <= BUDGET_PCT else "OVER"])
        print(f"phase 2: a prompt every {args.every:g} s, {args.seconds:g} s …", flush=True)
        stop = threading.Event()
        driver = threading.Thread(target=prompts, args=(server, agents, args.every, stop), daemon=True)
        driver.start()
        try:
            busy = measure(pids, args.seconds)
        finally:
            stop.set()
            driver.join()
        rows.append(["agents at work", f"{busy['muxd top']:.2f}", f"{busy['top -d 1']:.2f}",
                     ratio(busy["muxd top"], busy["top -d 1"]), f"{busy['daemon']:.2f}",
                     "ok" if busy["muxd top"] <= BUDGET_PCT else "OVER"])
        print(f"\n{args.panes} panes ({args.agents} agents), {COLUMNS}x{LINES} terminals, "
              f"{args.seconds:g} s a phase; % of one core")
        print_table(["phase", "muxd top %", "top -d 1 %", "muxd/peer", "daemon %", f"<= {BUDGET_PCT:g} %"], rows)
        return 0 if all(row[-1] == "ok" for row in rows) else 1
    finally:
        for terminal in terminals:
            terminal.close()
        server.stop()


if __name__ == "__main__":
    run_benchmark(main)
