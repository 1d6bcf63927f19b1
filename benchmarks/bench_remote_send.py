"""Cross-host send_task latency (issue 30): daemon alpha sends a prompt to a fake agent in daemon
beta's pane (`%N@beta`, through their shared PostgreSQL database: store/host_actions.py), against
alpha sending one to its own fake agent in the same run, rounds alternating.

Two figures per send, from the call leaving the client of alpha:
- to the execution id: the reply of SubmitPrompt (remote: alpha writes the action, beta claims it,
  delivers it and answers on the row, alpha hears the answer);
- to the agent receiving the prompt: the fake agent logs the time it reads the line
  ($FAKE_AGENT_PROMPT_LOG; the same machine's clock). Both paths type the prompt, then Enter
  SUBMIT_GAP_S later, as every delivery does.
Each round then waits for its execution's end through alpha (remote: beta tells alpha once the
ended row is written); a third figure, from the end (`completed_at`, as the owner stamped it) to
that wait's answer, covers completing and writing the row and hearing of it.

    .venv/bin/python benchmarks/bench_remote_send.py [--rounds 30] [--durable]

A private PostgreSQL cluster on this machine's socket (muxd/testing/postgres.py): commits are not
flushed to disk unless --durable (fsync and synchronous_commit on).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from _peers import percentile, run_benchmark
from _report import fmt, machine_note, print_table, ratio

from muxd.config import SUBMIT_GAP_S
from muxd.protocol.execution_messages import SubmitPrompt, WaitExecutions
from muxd.testing.fake_agent_panes import start_fake_agent
from muxd.testing.postgres import PostgresCluster
from muxd.testing.server import MuxdTestServer

THINK_S = "0.2"  # the fake agent's turn: short, the sends are what is measured
RECEIVE_TIMEOUT_S = 30.0
TURN_TIMEOUT_S = 60.0


def received_at(log: Path, message: str, deadline: float) -> float:
    """The epoch time the fake agent logged reading `message`."""
    while time.monotonic() < deadline:
        if log.exists():
            for line in log.read_text().splitlines():
                at, _, text = line.partition(" ")
                if text == message:
                    return float(at)
        time.sleep(0.002)
    raise TimeoutError(f"the agent never read {message!r}")


async def rounds(alpha: MuxdTestServer, targets: dict[str, tuple[str, Path]], count: int) -> dict[str, list[list[float]]]:
    """Per path: [ms to the execution id], [ms to the agent reading the prompt], [ms from the end to
    the wait's answer]."""
    found: dict[str, list[list[float]]] = {path: [[], [], []] for path in targets}
    client = await alpha.client()
    try:
        for n in range(count):
            for path, (target, log) in targets.items():
                message = f"bench {path} {n}"
                started_wall, started = time.time(), time.perf_counter()
                reply = await client.call(SubmitPrompt, target=target, message=message, triggered_by="mcp")
                found[path][0].append((time.perf_counter() - started) * 1000)
                read = await asyncio.to_thread(received_at, log, message, time.monotonic() + RECEIVE_TIMEOUT_S)
                found[path][1].append((read - started_wall) * 1000)
                ended = await client.call(WaitExecutions, execution_ids=[reply.execution.id], mode="all",
                                          timeout_s=TURN_TIMEOUT_S)
                told_at = time.time()
                done = ended.executions[0]
                assert not ended.timed_out and done.status == "success", done
                found[path][2].append((told_at - done.completed_at) * 1000)
    finally:
        await client.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--durable", action="store_true", help="the database flushes each commit to disk")
    args = parser.parse_args()
    settings = {"fsync": "on", "synchronous_commit": "on"} if args.durable else None
    with PostgresCluster(settings=settings) as cluster, tempfile.TemporaryDirectory() as tmp:
        url = cluster.url(cluster.create_database())
        servers = {host: MuxdTestServer(env={"MUXD_DB": url, "MUXD_HOST": host}).start() for host in ("alpha", "beta")}
        try:
            logs = {host: Path(tmp) / f"{host}.prompts" for host in servers}
            panes = {host: start_fake_agent(server, "agent", env={"FAKE_AGENT_PROMPT_LOG": str(logs[host]),
                                                                 "MUXD_FAKE_THINK_S": THINK_S})
                     for host, server in servers.items()}
            targets = {"local (alpha → alpha)": (panes["alpha"], logs["alpha"]),
                       "remote (alpha → beta)": (f"{panes['beta']}@beta", logs["beta"])}
            found = asyncio.run(rounds(servers["alpha"], targets, args.rounds))
        finally:
            for server in servers.values():
                server.stop()
    print(f"send_task latency, {args.rounds} rounds each, alternating; PostgreSQL on a local socket, "
          f"{'durable' if args.durable else 'fsync off'}; {machine_note()}")
    print(f"(every delivery types the prompt, then Enter {SUBMIT_GAP_S * 1000:.0f} ms later)")
    rows = []
    local_p50 = [percentile(found["local (alpha → alpha)"][i], 0.5) for i in (0, 1)]
    for path, (to_id, to_agent, to_waiter) in found.items():
        p50_id, p50_agent = percentile(to_id, 0.5), percentile(to_agent, 0.5)
        rows.append([path, fmt(p50_id), fmt(percentile(to_id, 0.95)), fmt(max(to_id)), ratio(p50_id, local_p50[0]),
                     fmt(p50_agent), fmt(percentile(to_agent, 0.95)), ratio(p50_agent, local_p50[1]),
                     fmt(percentile(to_waiter, 0.5)), fmt(percentile(to_waiter, 0.95))])
    print_table(["path", "id p50 ms", "id p95", "id max", "id ÷ local", "agent p50 ms", "agent p95", "agent ÷ local",
                 "end→wait p50", "end→wait p95"], rows)
    return 0


if __name__ == "__main__":
    run_benchmark(main)
