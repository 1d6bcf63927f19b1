"""Is the fake Claude Code a fair stand-in for the real one? The daemon's CPU over a turn of each,
side by side in one run: what bench_history_daemon.py's figure rests on (the history's cost is a
share of what the daemon spends on busy panes, so a fake drawing less than the real CLI would
make recording look dearer, one drawing more cheaper).

    .venv/bin/python benchmarks/bench_agent_stand_in.py [--turns 3] [--turn-s 8]

One daemon (history off, so that only the pane's output, emulation and detection are measured),
an 80x24 pane: first the fake (`muxd.testing.fake_agent claude`, its spinner for `--turn-s`),
then the real Claude Code against a scripted model server thinking for as long (`--turn-s` of
thinking chunks, then a short answer). Each turn is measured over a fixed window of the turn and
2 s after it, in which nothing else asks the daemon anything (the prompt is typed and Enter
pressed the same way for both); the first turn of each is not counted (the daemon's own first
frames). Printed: each turn's daemon CPU (its threads' clocks), the medians and real/fake. Needs
the real CLI (`bash .ci/install-agents`).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _peers import cpu_seconds_exact, run_benchmark

from muxd.config import DEFAULT_COLUMNS, DEFAULT_LINES, SUBMIT_GAP_S
from muxd.testing.fake_agent_panes import agent_state, start_fake_agent
from muxd.testing.fake_models import AnthropicFake, Say, Think
from muxd.testing.fake_models.agent_pane import CliPanes
from muxd.testing.fake_models.launch import find_cli
from muxd.testing.server import MuxdTestServer

SIZE = (DEFAULT_COLUMNS, DEFAULT_LINES)  # a new session's, as bench_history_daemon's panes are
AFTER_TURN_S = 2.0  # the window runs this long past the turn: its end, the prompt back
THINK_CHUNK_S = 0.2  # the real CLI's turn: a thinking chunk this often
PROMPT = "think"


def submit(server: MuxdTestServer, pane: str) -> None:
    """The prompt typed, then Enter as its own write a moment later, as the daemon delivers one
    (ink-based CLIs take a CR in the same read as text for a newline): the same two requests for
    either agent, in its window."""
    server.run_here("send-keys", "-t", pane, "-l", PROMPT, check=True)
    time.sleep(SUBMIT_GAP_S)
    server.run_here("send-keys", "-t", pane, "Enter", check=True)


def turns(server: MuxdTestServer, pane: str, send: Callable[[], None], count: int, turn_s: float,
          label: str) -> list[float]:
    """The daemon's CPU seconds over each of `count` turns of `pane`, started by `send()`."""
    spent = []
    for n in range(count):
        before = cpu_seconds_exact(server.pid or 0)
        send()
        time.sleep(turn_s + AFTER_TURN_S)  # a fixed window, nothing asked of the daemon in it
        spent.append(cpu_seconds_exact(server.pid or 0) - before)
        state = agent_state(server, pane)
        print(f"{label} turn {n + 1}: {spent[-1] * 1000:.1f} ms of daemon CPU (then {state})", flush=True)
        if state != "Idle":
            raise SystemExit(f"{label}: the turn had not ended {AFTER_TURN_S:g} s after its length")
    return spent


def measure(root: Path, count: int, turn_s: float) -> tuple[list[float], list[float]]:
    """The daemon's CPU seconds over each measured turn: the fake's, the real CLI's."""
    server = MuxdTestServer(env={"MUXD_HISTORY": "0"}).start()
    try:
        fake = start_fake_agent(server, "fake", env={"MUXD_FAKE_THINK_S": f"{turn_s:g}"}, cwd=root)
        fake_cpu = turns(server, fake, lambda: submit(server, fake), count + 1, turn_s, "fake")[1:]
        server.cli("kill-session", "-t", "fake", check=True)

        thinking = [Think(tokens=int(turn_s / THINK_CHUNK_S), delay_s=THINK_CHUNK_S), Say("Done here.")]
        model = AnthropicFake([thinking for _ in range(count + 2)])
        panes = CliPanes(server, root, timeout=90)
        try:
            real = panes.start("claude", model, size=SIZE)
            assert real is not None, panes.missing
            real_cpu = turns(server, real.pane_id, lambda: submit(server, real.pane_id), count + 1, turn_s,
                             "real")[1:]
        finally:
            panes.close()
    finally:
        server.stop()
    return fake_cpu, real_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=3, help="measured turns of each (after a first, not measured)")
    parser.add_argument("--turn-s", type=float, default=8.0)
    args = parser.parse_args()
    installed, why = find_cli("claude")
    if installed is None:
        print(f"the real Claude Code is not installed ({why}): bash .ci/install-agents")
        return 2
    with tempfile.TemporaryDirectory(prefix="muxd-stand-in-") as root:
        fake_cpu, real_cpu = measure(Path(root), args.turns, args.turn_s)
    fake_ms, real_ms = statistics.median(fake_cpu) * 1000, statistics.median(real_cpu) * 1000
    print(f"daemon CPU a turn of {args.turn_s:g} s (+{AFTER_TURN_S:g} s), median of {args.turns}: "
          f"fake {fake_ms:.1f} ms, real Claude Code {real_ms:.1f} ms; real/fake {real_ms / fake_ms:.2f}x")
    return 0


if __name__ == "__main__":
    run_benchmark(main)
