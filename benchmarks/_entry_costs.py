"""`bench_history_daemon.py --entry-costs`: the history's own code on a recording daemon's loop,
per execution recorded, as thread_names/entry_costs.py times it inside each daemon.

    costs = EntryCosts(folder)           # one per daemon: MUXD_BENCH_ENTRY_COSTS=folder in its environment
    costs.mark("start 1"); ...; costs.mark("end 1")
    print(direct_lines("on", on_costs, off_costs, "start 1", "end 1", recorded=120, loop_extra_ms=0.47))

What the calls by which the loop enters the history (`outer`) cost is the history's direct
cost; what the loop's CPU grew by beyond it is recording's effect on the rest of the daemon.
Each wrapped call costs the wrapper's own time too: the daemon with the history off enters the
history's `agent_changed` on every state and leaves at once, so its time a call is that floor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from muxd.testing.wait import wait_until


class EntryCosts:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.snapshots: dict[str, dict[str, Any]] = {}

    def mark(self, label: str) -> None:
        """The daemon writes its counts now (within its poll): kept as `label`'s."""
        (self.folder / "mark").write_text(label)
        self.snapshots[label] = wait_until(lambda: self._written(label), timeout=30,
                                           message=f"the daemon's entry costs at {label!r}")

    def _written(self, label: str) -> dict[str, Any] | None:
        for path in self.folder.glob("*.json"):
            try:
                snapshot = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # (written as this looks: the daemon replaces the file whole)
            if snapshot.get("mark") == label:
                return snapshot
        return None

    def spent(self, start: str, end: str) -> dict[str, tuple[int, float]]:
        """(calls, seconds) of each timed call from `start` to `end`."""
        before, after = self.snapshots[start]["counts"], self.snapshots[end]["counts"]
        out = {}
        for name, (calls, seconds) in after.items():
            was = before.get(name, (0, 0.0))
            if calls - was[0]:
                out[name] = (int(calls - was[0]), seconds - was[1])
        return out

    def outer(self, label: str) -> list[str]:
        return list(self.snapshots[label]["outer"])


def direct_lines(label: str, costs: EntryCosts, off: EntryCosts, start: str, end: str,
                 recorded: int, loop_extra_ms: float) -> list[str]:
    """Lines that say, for the recording daemon `label`, each timed call per execution and the
    direct cost against `loop_extra_ms` (what its loop spent over `off`'s, per execution)."""
    spent = costs.spent(start, end)
    off_state = off.spent(start, end).get("ExecutionService.agent_changed", (0, 0.0))
    floor_us = off_state[1] / off_state[0] * 1e6 if off_state[0] else 0.0
    executions = max(recorded, 1)
    lines = [f"    {label}: the history's calls on the loop, per execution recorded "
             f"(a wrapped call costs ~{floor_us:.1f} us more: the history-off daemon's agent_changed)"]
    outer = costs.outer(end)
    for name in sorted(spent, key=lambda n: (n not in outer, -spent[n][1])):
        calls, seconds = spent[name]
        lines.append(f"      {'' if name in outer else '  '}{name:38} {calls / executions:6.1f} calls "
                     f"{seconds / calls * 1e6:7.1f} us each {seconds / executions * 1e3:7.3f} ms")
    direct = sum(spent[n][1] for n in outer if n in spent) / executions * 1e3
    wrappers = sum(calls for calls, _ in spent.values()) / executions * floor_us / 1e3
    lines.append(f"      direct {direct:.3f} ms (less the wrappers' ~{wrappers:.3f}: {direct - wrappers:.3f}) "
                 f"of the loop's +{loop_extra_ms:.3f} ms")
    return lines
