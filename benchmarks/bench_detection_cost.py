"""What agent detection costs next to emulation, replaying the corpus's raw session logs.

    .venv/bin/python benchmarks/bench_detection_cost.py [--panes 20] [--rate 2048]

The raw logs (../shared/corpus/real/*/*_raw.bin) carry no timing, so each is paced as an agent
TUI paces itself: 256-byte chunks at --rate bytes per second (spinner redraws make agent
output nearly continuous). --panes panes replay the four logs round-robin, interleaved in
time as one daemon would see them. Detection runs exactly as in the daemon (at most every
100 ms while output flows, 50 ms after it stops). Printed: emulation CPU, detection CPU, the
ratio (target: detection adds under 10 %), and CPU per pane-second of session.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time
from pathlib import Path

from muxd.detectors.registry import load_detectors
from muxd.detectors.replay import frame_context
from muxd.detectors.runner import DetectionSchedule, DetectorRunner
from muxd.emulator import Emulator

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
CHUNK_BYTES = 256
COLUMNS, LINES = 120, 40


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panes", type=int, default=20)
    parser.add_argument("--rate", type=int, default=2048, help="bytes per second per pane")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    logs = sorted(args.corpus.glob("*/*_raw.bin"))
    if not logs:
        print(f"no raw logs under {args.corpus} (they live in ../shared beside the repo)")
        return 1
    detectors = load_detectors()
    data = [path.read_bytes() for path in logs]
    interval = CHUNK_BYTES / args.rate

    # Every pane's chunks as (time, pane, chunk) events, merged in time order.
    events: list[tuple[float, int, bytes]] = []
    for pane in range(args.panes):
        blob = data[pane % len(data)]
        offset = (pane // len(data)) * interval / 3  # copies of one log are not in lock-step
        events += [(offset + i / CHUNK_BYTES * interval, pane, blob[i:i + CHUNK_BYTES])
                   for i in range(0, len(blob), CHUNK_BYTES)]
    events.sort(key=lambda e: (e[0], e[1]))
    session_seconds = sum(len(data[p % len(data)]) / args.rate for p in range(args.panes))

    emulators = [Emulator(columns=COLUMNS, lines=LINES) for _ in range(args.panes)]
    clocks = [0.0] * args.panes
    runners = [DetectorRunner(f"%{p}", detectors, clock=lambda p=p: clocks[p]) for p in range(args.panes)]
    schedules = [DetectionSchedule() for _ in range(args.panes)]
    due: list[tuple[float, int]] = []
    emulate_cpu = detect_cpu = 0.0
    runs = changes = 0

    def detect_until(moment: float) -> None:
        nonlocal detect_cpu, runs, changes
        while due and due[0][0] <= moment:
            when, pane = heapq.heappop(due)
            clocks[pane] = when
            started = time.process_time()
            before = runners[pane].state
            changed = runners[pane].run(frame_context(emulators[pane], when))
            schedules[pane].ran(when, changed=runners[pane].significant(before, changed) or runners[pane].pending)
            changes += changed is not None
            if runners[pane].pending:
                nxt = schedules[pane].output(when)
                if nxt is not None:
                    heapq.heappush(due, (nxt, pane))
            detect_cpu += time.process_time() - started
            runs += 1

    for when, pane, chunk in events:
        detect_until(when)
        started = time.process_time()
        emulators[pane].feed(chunk)
        emulate_cpu += time.process_time() - started
        nxt = schedules[pane].output(when)
        if nxt is not None:
            heapq.heappush(due, (nxt, pane))
    detect_until(float("inf"))

    total = sum(len(data[p % len(data)]) for p in range(args.panes))
    print(f"logs: {', '.join(p.parent.name for p in logs)}; {args.panes} panes, {total / 1e6:.1f} MB, "
          f"paced at {args.rate} B/s per pane in {CHUNK_BYTES}-byte chunks ({session_seconds:.0f} pane-seconds)")
    print(f"emulation CPU  {emulate_cpu:7.3f} s   {emulate_cpu / session_seconds * 1e3:7.3f} ms per pane-second")
    print(f"detection CPU  {detect_cpu:7.3f} s   {detect_cpu / session_seconds * 1e3:7.3f} ms per pane-second "
          f"({runs} runs, {detect_cpu / max(1, runs) * 1e3:.2f} ms each, {changes} published changes)")
    print(f"detection / emulation: {detect_cpu / emulate_cpu:.1%} (target < 10 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
