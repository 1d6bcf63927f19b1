"""How soon a person's scripts are told: an agent begins to wait, until a `set-hook` command has
run and until `muxd watch` has printed the event (p50, p95), against peers measured in the same
run on the same machine.

    .venv/bin/python benchmarks/bench_alert_latency_scripts.py [--samples 20]

muxd: a fake Claude asks for a yes (`tool`); the daemon publishes agent-waiting (its `at`, heard
on a subscribed connection). Two listeners measure from that `at`:
- hook: `set-hook -g agent-waiting 'run-shell "date +%s.%N >> FILE"'`: the time the hook's shell
  wrote (a muxd process starts for the hook's commands, then `sh`);
- watch: a `muxd watch --kind agent-waiting` process; the time a reader thread got its line.
The agent then declines and goes idle, and the next sample begins.

Peers:
- tmux hook: a program in a background window of a private tmux server takes the time and rings
  the bell; tmux's alert-bell hook runs `date` (tmux's own event to a hook's shell);
- subscriber: the subscribed connection itself (the floor for watch: the same event, no process
  in between), reported as the delay from `at` to its arrival.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _report import latency_rows, print_table
from bench_alert_latency import SAMPLE_TIMEOUT_S, tmux_alert_samples

from muxd.testing.event_tap import EventTap
from muxd.testing.fake_agent_panes import agent_state, start_fake_agent
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

DEFAULT_SAMPLES = 20


class LineStamps:
    """A process's stdout lines, each with the wall-clock time a reader thread got it."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.lines.append((time.time(), line))


def muxd_samples(samples: int, work: Path) -> dict[str, list[float]]:
    server = MuxdTestServer().start()
    hooked = work / "muxd-hook.times"
    tap = EventTap(server)
    watch = subprocess.Popen([sys.executable, "-m", "muxd", "-L", server.name, "watch", "--kind", "agent-waiting"],
                             env=server.env, stdout=subprocess.PIPE, text=True)
    lines = LineStamps(watch)
    try:
        far = start_fake_agent(server, "far")
        server.cli("set-hook", "-g", "agent-waiting", f"run-shell \"date +%s.%N >> {shlex.quote(str(hooked))}\"",
                   check=True)
        results: dict[str, list[float]] = {"hook": [], "watch": [], "subscriber": []}
        # The watch subscribes in its own time: a first question, not counted, shows it is listening.
        for number in range(samples + 1):
            seen = len(tap.events)
            server.cli("send-keys", "-t", far, "tool", "Enter", check=True)
            waiting = wait_until(lambda: next((e for e in tap.events[seen:] if e.kind == "agent-waiting"), None),
                                 timeout=SAMPLE_TIMEOUT_S, message="agent-waiting")
            index = tap.events.index(waiting)
            hook_at = wait_until(lambda: _line(hooked, number), timeout=SAMPLE_TIMEOUT_S, message="the hook ran")
            line_at = wait_until(lambda: lines.lines[number][0] if len(lines.lines) > number else None,
                                 timeout=SAMPLE_TIMEOUT_S, message="muxd watch printed")
            if number:
                results["hook"].append((hook_at - waiting.at) * 1000)
                results["watch"].append((line_at - waiting.at) * 1000)
                results["subscriber"].append((tap.arrivals[index] - waiting.at) * 1000)
            server.cli("send-keys", "-t", far, "n", "Enter", check=True)  # declined: back to its prompt
            wait_until(lambda: agent_state(server, far) == "Idle", timeout=SAMPLE_TIMEOUT_S, message="idle again")
        return results
    finally:
        watch.terminate()
        watch.wait(10)
        tap.close()
        server.stop()


def _line(path: Path, number: int) -> float | None:
    times = path.read_text().split() if path.exists() else []
    return float(times[number]) if len(times) > number else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muxd-alert-scripts-") as directory:
        work = Path(directory)
        started = time.monotonic()
        measured = muxd_samples(args.samples, work)
        tmux_hook = tmux_alert_samples(args.samples, work)
    results = {"muxd: agent-waiting → set-hook's shell": measured["hook"],
               "muxd: agent-waiting → muxd watch's line": measured["watch"],
               "muxd: agent-waiting → a subscribed connection": measured["subscriber"],
               "tmux: a bell → its alert-bell hook's shell": tmux_hook}
    tmux_p50 = statistics.median(tmux_hook)
    floor_p50 = statistics.median(measured["subscriber"])
    rows = latency_rows(results, [tmux_p50, floor_p50])
    print(f"alert latency to scripts, {args.samples} samples each "
          f"({time.monotonic() - started:.0f} s, load {os.getloadavg()[0]:.2f})")
    print_table(["path", "n", "p50", "p95", "max", "p50 / tmux hook", "p50 / subscriber"], rows)


if __name__ == "__main__":
    main()
