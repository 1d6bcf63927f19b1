"""Does a real agent read Idle while it works? The real CLIs in muxd panes, offline against the
scripted model servers, each run a turn with a long shell command on a machine kept busy by
`--load` spinning processes; what an orchestrator would read (the pane's latest published
state, sampled every 50 ms) is compared with the truth the model server knows: from the
agent's first request of the turn to its last (the tool's result sent back), the agent works.
Each CLI runs with muxd's hooks and without (the screen alone): the peer, in the same run.

    .venv/bin/python benchmarks/bench_live_idle.py [--load 2] [--runs 2] [--cli claude,codex,gemini]

Printed per CLI and source: samples inside the working window, how many read Idle (false Idle;
how many of those in the turn's first second, where the screen has not yet drawn it busy),
how many read a busy state, and how long after the last request Idle was published (the answer
streams in that time, so it is the turn's tail plus muxd's delay). Needs `.ci/install-agents`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _report import fmt, print_table

from muxd.detectors.state import BUSY_STATES
from muxd.testing.fake_models import AnthropicFake, Call, GeminiFake, OpenAIResponsesFake, Say, Think, launch
from muxd.testing.fake_models.agent_pane import AgentPane
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

SAMPLE_S = 0.05
TURN_TIMEOUT_S = 120.0
ANSWER = "The command finished and the work is done."
EARLY_S = 1.0  # a false Idle this soon after the first request: the screen not yet redrawn busy


def _scripts(cli: str) -> tuple[Any, list[str], str]:
    """(the fake model server, the CLI's flags, the prompt) of a turn with a long command."""
    if cli == "claude":
        return (AnthropicFake([[Think(20, 0.05), Say("I will run it.", 0.03),
                                Call("Bash", {"command": "mkdir -p d && sleep 8 && ls d", "description": "Build"})],
                               [Say(ANSWER, 0.03)]]), ["--permission-mode", "default", "--allowedTools", "Bash"],
                "please run the build")
    if cli == "codex":
        return (OpenAIResponsesFake([[Think(20, 0.05), Call("exec_command", {"cmd": "sleep 8; echo built"})],
                                     [Say(ANSWER, 0.03)]]), ["--dangerously-bypass-approvals-and-sandbox"],
                "please run the build")
    # Gemini: past ~20 s its spinner gives way to "Shell awaiting input" while the command runs.
    return (GeminiFake([[Call("run_shell_command", {"command": "sleep 25; echo built", "description": "Build"})],
                        [Say(ANSWER, 0.03)]]), ["--yolo"], "please run the build")


def _install_gemini_hooks(agent: launch.AgentLaunch) -> None:
    env = {**os.environ, "HOME": agent.env["HOME"]}
    subprocess.run([sys.executable, "-m", "muxd", "hooks", "install", "--agent", "gemini"], env=env, check=True,
                   capture_output=True, timeout=60)


def _sample(pane: AgentPane, stop: threading.Event, samples: list[tuple[float, str]]) -> None:
    while not stop.is_set():
        states = pane.states.since(max(0, len(pane.states) - 1))
        if states:
            samples.append((time.time(), states[-1]["activity"]["state"]))
        stop.wait(SAMPLE_S)


def one_turn(server: MuxdTestServer, root: Path, cli: str, hooks: bool) -> dict[str, float]:
    bin_dir, why = launch.find_cli(cli)
    if bin_dir is None:
        raise SystemExit(f"{cli}: {why}")
    fake, flags, prompt = _scripts(cli)
    with fake:
        make = {"claude": launch.claude, "codex": launch.codex, "gemini": launch.gemini}[cli]
        agent = make(root, fake.url, bin_dir, *flags)
        agent = dataclasses.replace(agent, env={**agent.env, "MUXD_AGENT_HOOKS": "1" if hooks else "0"})
        if cli == "gemini" and hooks:
            _install_gemini_hooks(agent)
        pane = AgentPane(server, agent, session=f"{cli}{int(hooks)}")
        try:
            pane.start().wait_for("Idle", lambda s: s["session"]["model"], timeout=TURN_TIMEOUT_S)
            samples: list[tuple[float, str]] = []
            stop = threading.Event()
            sampler = threading.Thread(target=_sample, args=(pane, stop, samples), daemon=True)
            sampler.start()
            pane.submit(prompt)
            fake.wait_for_main_requests(2, timeout=TURN_TIMEOUT_S)
            wait_until(lambda: ANSWER.split()[0] in pane.screen() and pane.agent()["activity"]["state"] == "Idle",
                       timeout=TURN_TIMEOUT_S, interval=0.1, message="the answer shown and Idle")
            stop.set()
            sampler.join()
            requests = fake.main_requests()
            first, last = requests[0].at, requests[-1].at
            window = [(at, state) for at, state in samples if first <= at <= last]
            idle_at = next((at for at, state in samples if at > last and state == "Idle"), None)
            return {"samples": len(window), "false_idle": sum(s == "Idle" for _, s in window),
                    "early_idle": sum(s == "Idle" and at - first < EARLY_S for at, s in window),
                    "busy": sum(s in BUSY_STATES for _, s in window),
                    "idle_after_ms": (idle_at - last) * 1000 if idle_at is not None else float("nan")}
        finally:
            pane.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", type=int, default=2, help="processes spinning on the CPU meanwhile")
    parser.add_argument("--runs", type=int, default=2, help="turns per CLI and source")
    parser.add_argument("--cli", default="claude,codex,gemini")
    args = parser.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    rows, totals = [], {True: [0, 0], False: [0, 0]}
    server = MuxdTestServer().start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
            for cli in args.cli.split(","):
                for hooks in (True, False):
                    runs = [one_turn(server, Path(tmp) / f"{cli}-{int(hooks)}-{n}", cli, hooks)
                            for n in range(args.runs)]
                    samples = sum(r["samples"] for r in runs)
                    false_idle = sum(r["false_idle"] for r in runs)
                    early = sum(r["early_idle"] for r in runs)
                    busy = sum(r["busy"] for r in runs)
                    totals[hooks][0] += samples
                    totals[hooks][1] += false_idle
                    tails = [r["idle_after_ms"] for r in runs]
                    rows.append([cli, "hooks + screen" if hooks else "screen alone", str(samples), f"{false_idle} ({early} in the first {EARLY_S:g} s)",
                                 f"{100 * busy / samples:.1f} %" if samples else "-",
                                 fmt(statistics.median(tails), " ms", 0)])
    finally:
        server.stop()
        for hog in hogs:
            hog.kill()
    print(f"load: {args.load} spinning processes on {os.cpu_count()} cores; {args.runs} turn(s) each")
    print_table(["cli", "source", "samples while working", "false Idle", "busy", "Idle after last request (p50)"],
                rows)
    for hooks, (samples, false_idle) in totals.items():
        print(f"{'hooks + screen' if hooks else 'screen alone'}: {false_idle} false Idle in {samples} samples")


if __name__ == "__main__":
    main()
