"""What the agents' hooks cost them, and how soon muxd knows: `muxd hook --agent claude`
start-to-exit, with a real event on stdin handed to a real daemon, against a bare `python -c
pass` of the same interpreter fed the same bytes; and hook-to-state latency, from the moment the
hook command starts to the first `agent_summary` (the Summary request MCP's tool makes) that
shows the event's state, p50/p95 over alternating prompts and Stops, against the bare
interpreter's start (the floor of any hook that is a program), all measured in the same run.

    .venv/bin/python benchmarks/bench_hooks.py [--runs 30]

An agent runs the hook command on every tool call (Claude Code: PreToolUse and PostToolUse, so
twice a call) and waits for it to exit, so its start is what a turn pays. It runs as the hook
runs it in a pane: the `muxd` console script, with the pane's MUXD, MUXD_PANE and MUXD_TOKEN.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import statistics
import sys
import time

from _peers import run_benchmark
from _timing import paired_medians, run_ms

from muxd.protocol.messages import Summary
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

LATENCY_GIVE_UP_S = 10.0
EVENTS = {
    "PreToolUse": {"hook_event_name": "PreToolUse", "session_id": "bench", "tool_name": "Bash",
                   "tool_input": {"command": "pytest -q tests/test_x.py"}},
    "Stop": {"hook_event_name": "Stop", "session_id": "bench", "stop_hook_active": False},
}


def _pane_env(server: MuxdTestServer) -> dict[str, str]:
    """The environment a program in a new pane of `server` gets (MUXD, MUXD_PANE, MUXD_TOKEN)."""
    dump = server.socket_dir / "pane.env"
    server.cli("new-session", "-d", "-s", "bench", "--", "sh", "-c",
               f"env > {dump}.tmp && mv {dump}.tmp {dump}; exec sleep 600", check=True)
    wait_until(dump.exists, timeout=30, message="the pane's environment written")
    pane = dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)
    return {**server.env, **{k: pane[k] for k in ("MUXD", "MUXD_PANE", "MUXD_TOKEN")}}


async def _latencies(server: MuxdTestServer, hook: list[str], env: dict[str, str], runs: int) -> list[float]:
    """Milliseconds from starting `hook` with an event to the first Summary of the pane that
    shows the event's state (a prompt: Thinking; a Stop: Idle), `runs` events alternating."""
    client = await server.client()
    pane = env["MUXD_PANE"]
    took = []
    try:
        for run in range(runs):
            if run % 2 == 0:
                event, wanted = {"hook_event_name": "UserPromptSubmit", "session_id": "bench",
                                 "prompt": f"prompt {run}"}, "Thinking"
            else:
                event, wanted = EVENTS["Stop"], "Idle"
            started = time.perf_counter()
            process = await asyncio.create_subprocess_exec(*hook, env=env, stdin=asyncio.subprocess.PIPE)
            process.stdin.write(json.dumps(event).encode())  # type: ignore[union-attr]
            process.stdin.close()  # type: ignore[union-attr]
            while (await client.call(Summary, target=pane)).summary.activity.state != wanted:
                if time.perf_counter() - started > LATENCY_GIVE_UP_S:
                    raise TimeoutError(f"the pane never showed {wanted} after {event['hook_event_name']}")
            took.append((time.perf_counter() - started) * 1000)
            await process.wait()
    finally:
        await client.close()
    return took


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    import muxd

    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)
    script = os.path.join(os.path.dirname(sys.executable), "muxd")
    hook = [script if os.path.exists(script) else sys.executable, *([] if os.path.exists(script) else ["-m", "muxd"]),
            "hook", "--agent", "claude"]
    bare = [sys.executable, "-c", "pass"]
    server = MuxdTestServer().start()
    try:
        env = _pane_env(server)
        print(f"{' '.join(hook)} against {' '.join(bare)}, {args.runs} runs each, medians; the event on stdin")
        for name, event in EVENTS.items():
            took, cpu, bare_wall, bare_cpu = paired_medians(hook, bare, env, args.runs, json.dumps(event).encode())
            print(f"hook {name:12} {took:6.1f} ms  bare {bare_wall:5.1f} ms  ratio {took / bare_wall:4.2f}x"
                  f"   cpu {cpu:5.1f} ms  bare {bare_cpu:5.1f} ms  ratio {cpu / bare_cpu:4.2f}x")
        outside = {k: v for k, v in env.items() if k not in ("MUXD", "MUXD_PANE", "MUXD_TOKEN")}
        took, cpu, bare_wall, bare_cpu = paired_medians(hook, bare, outside, args.runs,
                                                        json.dumps(EVENTS["Stop"]).encode())
        print(f"hook {'(no pane)':12} {took:6.1f} ms  bare {bare_wall:5.1f} ms  ratio {took / bare_wall:4.2f}x"
              f"   cpu {cpu:5.1f} ms  bare {bare_cpu:5.1f} ms  ratio {cpu / bare_cpu:4.2f}x")
        latencies = asyncio.run(_latencies(server, hook, env, args.runs))
        starts = [run_ms(bare, env)[0] for _ in range(args.runs)]
        p50, p95 = statistics.median(latencies), _percentile(latencies, 0.95)
        floor = statistics.median(starts)
        print(f"hook -> agent_summary   p50 {p50:6.1f} ms  p95 {p95:6.1f} ms   "
              f"bare start p50 {floor:5.1f} ms  ratio p50 {p50 / floor:4.2f}x  p95 {p95 / floor:4.2f}x")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    run_benchmark(main)
