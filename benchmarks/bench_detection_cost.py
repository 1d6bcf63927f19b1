"""What agent detection costs next to emulation, for 20 panes of agents at recorded speed.

    .venv/bin/python benchmarks/bench_detection_cost.py [--panes 20] [--source raw|casts|both] [--backend both]

Two sources, both replayed exactly as the daemon would see them, interleaved in time:
- **raw**: the corpus's four raw session logs (../shared/corpus/real/*/*_raw.bin). They carry no
  timing, so each is paced at the speed its CLI really writes: the bytes per second of output
  and the bytes per read measured from the project's own recordings of the same CLI versions
  (benchmarks/data/agents/<agent>.cast.gz, made by record_agents.py at real speed).
- **casts**: those recordings themselves, at their recorded timing.
--panes panes take the sessions round-robin (copies start a little apart). Detection runs as in
the daemon (DetectionSchedule). Printed: emulation CPU, detection CPU, the ratio (target:
detection adds under 10 % to emulation) and CPU per pane-second of session, for each emulator
backend (`--backend pyte|ghostty|both`, through muxd.emulator.backend.new_emulator), with each
backend's figures against the pyte backend's (today's default) in the same run. Peer, in the
same run: the same output through the pyte emulator's plain path (pyte's parser, per-character
drawing), which the fast paths must match byte for byte; --no-peer skips it.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time
from pathlib import Path

from muxd.detectors.registry import load_detectors
from muxd.detectors.replay import frame_context, read_recording
from muxd.detectors.runner import DetectionSchedule, DetectorRunner
from muxd.emulator import Emulator
from muxd.emulator.backend import BACKENDS, new_emulator

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[1] / "shared" / "corpus" / "real"
RECORDINGS = HERE / "data" / "agents"
COLUMNS, LINES = 120, 40
Events = list[tuple[float, bytes]]


def recorded_pace(events: Events) -> tuple[float, int]:
    """(bytes per second while the CLI is writing, mean bytes per read) of a recording."""
    total = sum(len(data) for _, data in events)
    active_seconds = len({int(when) for when, _ in events})
    return total / max(1, active_seconds), max(1, total // max(1, len(events)))


def paced(blob: bytes, bytes_per_s: float, chunk: int) -> Events:
    return [(i / bytes_per_s, blob[i:i + chunk]) for i in range(0, len(blob), chunk)]


def sessions(source: str, corpus: Path) -> list[tuple[str, Events]]:
    casts = {path.name.split(".")[0]: read_recording(path).events for path in sorted(RECORDINGS.glob("*.cast.gz"))}
    found: list[tuple[str, Events]] = []
    if source in ("raw", "both"):
        for log in sorted(corpus.glob("*/*_raw.bin")):
            agent = log.parent.name
            if agent not in casts:
                print(f"no recording of {agent} to pace its raw log by; skipped")
                continue
            rate, chunk = recorded_pace(casts[agent])
            found.append((f"raw:{agent} ({rate / 1024:.1f} KiB/s, {chunk} B reads)", paced(log.read_bytes(), rate, chunk)))
    if source in ("casts", "both"):
        found += [(f"cast:{agent}", events) for agent, events in casts.items()]
    return found


def interleaved(name_events: list[tuple[str, Events]], panes: int) -> tuple[list[tuple[float, int, bytes]], float]:
    """The panes' output as one timeline of (time, pane, bytes), and the pane-seconds it spans."""
    timeline: list[tuple[float, int, bytes]] = []
    session_seconds = 0.0
    for pane in range(panes):
        events = name_events[pane % len(name_events)][1]
        offset = (pane // len(name_events)) * 0.037  # copies of one session are not in lock-step
        timeline += [(offset + when, pane, data) for when, data in events]
        session_seconds += events[-1][0] if events else 0.0
    timeline.sort(key=lambda e: (e[0], e[1]))
    return timeline, session_seconds


def plain_emulation_cpu(name_events: list[tuple[str, Events]], panes: int) -> float:
    """CPU to emulate the same timeline with the emulator's plain path (pyte's own parser and
    per-character drawing, no fast paths): the pyte ByteStream + MuxScreen of the architecture."""
    timeline, _ = interleaved(name_events, panes)
    emulators = [Emulator(columns=COLUMNS, lines=LINES, fast_paths=False) for _ in range(panes)]
    started = time.process_time()
    for _, pane, data in timeline:
        emulators[pane].feed(data)
    return time.process_time() - started


def measure(name_events: list[tuple[str, Events]], panes: int, backend: str) -> dict[str, float]:
    detectors = load_detectors()
    timeline, session_seconds = interleaved(name_events, panes)

    emulators = [new_emulator(COLUMNS, LINES, backend=backend) for _ in range(panes)]
    loaded = {type(e).__name__ for e in emulators}
    if backend == "ghostty" and loaded == {Emulator.__name__}:
        raise SystemExit("the ghostty backend did not load (pyghostty / libghostty-vt): no figures for it")
    clocks = [0.0] * panes
    runners = [DetectorRunner(f"%{p}", detectors, clock=lambda p=p: clocks[p]) for p in range(panes)]
    schedules = [DetectionSchedule() for _ in range(panes)]
    due: list[tuple[float, int]] = []
    totals = {"context": 0.0, "runs": 0, "changes": 0}
    emulate_of = [0.0] * panes  # CPU per pane: summed for the totals and for each agent's ratio
    detect_of = [0.0] * panes

    def detect_until(moment: float) -> None:
        while due and due[0][0] <= moment:
            when, pane = heapq.heappop(due)
            if schedules[pane].due != when:
                continue  # superseded: the look moved later while output kept coming
            clocks[pane] = when
            started = time.process_time()
            emulators[pane].flush()  # output a flood left deferred: emulation, done late
            emulate_of[pane] += time.process_time() - started
            started = time.process_time()
            runner = runners[pane]
            before = runner.state
            ctx = frame_context(emulators[pane], when)
            totals["context"] += time.process_time() - started
            changed = runner.run(ctx)
            schedules[pane].ran(when, changed=runner.significant(before, changed) or runner.pending)
            if runner.pending:
                nxt = schedules[pane].again(when)
                if nxt is not None:
                    heapq.heappush(due, (nxt, pane))
            detect_of[pane] += time.process_time() - started
            totals["runs"] += 1
            totals["changes"] += changed is not None

    for when, pane, data in timeline:
        detect_until(when)
        started = time.process_time()
        emulators[pane].feed(data)
        emulate_of[pane] += time.process_time() - started
        nxt = schedules[pane].output(when)
        if nxt is not None:
            heapq.heappush(due, (nxt, pane))
    detect_until(float("inf"))
    totals["emulate"], totals["detect"] = sum(emulate_of), sum(detect_of)
    totals["session_seconds"] = session_seconds
    totals["bytes"] = sum(len(data) for _, _, data in timeline)
    per_session: dict[str, list[float]] = {}
    for pane in range(panes):
        name, events = name_events[pane % len(name_events)]
        row = per_session.setdefault(name.split(" ")[0], [0.0, 0.0, 0.0])
        row[0] += emulate_of[pane]
        row[1] += detect_of[pane]
        row[2] += events[-1][0] if events else 0.0
    totals["per_session"] = per_session  # type: ignore[assignment]
    return totals


def report(title: str, t: dict[str, float]) -> None:
    seconds = t["session_seconds"]
    print(f"{title}: {t['bytes'] / 1e6:.1f} MB over {seconds:.0f} pane-seconds")
    print(f"  emulation CPU  {t['emulate']:7.3f} s   {t['emulate'] / seconds * 1e3:7.3f} ms per pane-second")
    print(f"  detection CPU  {t['detect']:7.3f} s   {t['detect'] / seconds * 1e3:7.3f} ms per pane-second "
          f"({t['runs']:.0f} runs, {t['detect'] / max(1, t['runs']) * 1e3:.3f} ms each, "
          f"{t['runs'] / seconds:.2f} per pane-second, {t['changes']:.0f} published)")
    print(f"  of which screen text (display_lines) {t['context'] / max(t['detect'], 1e-9):.0%}, "
          f"the runner and detectors the rest")
    print(f"  detection / emulation: {t['detect'] / t['emulate']:.1%} (target < 10 %); "
          f"the screen text alone: {t['context'] / t['emulate']:.1%}")
    for name, (emulate, detect, seconds) in t["per_session"].items():  # type: ignore[union-attr]
        print(f"    {name:13} emulation {emulate / seconds * 1e3:6.3f}, detection {detect / seconds * 1e3:6.3f} "
              f"ms per pane-second: {detect / emulate:6.1%}")
    if "plain" in t:
        print(f"  peer: the same output through the plain emulation (pyte's parser, no fast paths) "
              f"{t['plain']:.3f} s, {t['plain'] / t['emulate']:.1f}x the fast one; "
              f"detection / plain emulation: {t['detect'] / t['plain']:.1%}")


def compare_backends(source: str, by_backend: dict[str, dict[str, float]]) -> None:
    """One row per backend: CPU per pane-second, and against the pyte backend's in this run."""
    pyte = by_backend.get("pyte")
    print(f"{source}: per pane-second, each backend against pyte's (x < 1.0: cheaper than pyte)")
    print(f"  {'backend':<8} {'emulation ms':>12} {'detection ms':>12} {'together ms':>11} "
          f"{'emulation/pyte':>14} {'detection/pyte':>14} {'together/pyte':>13}")
    for backend, t in by_backend.items():
        seconds = t["session_seconds"]
        cells = [t["emulate"], t["detect"], t["emulate"] + t["detect"]]
        versus = ([f"{a / b:.2f}x" if b else "-" for a, b in
                   zip(cells, [pyte["emulate"], pyte["detect"], pyte["emulate"] + pyte["detect"]])]
                  if pyte else ["-"] * 3)
        print(f"  {backend:<8} {cells[0] / seconds * 1e3:>12.3f} {cells[1] / seconds * 1e3:>12.3f} "
              f"{cells[2] / seconds * 1e3:>11.3f} {versus[0]:>14} {versus[1]:>14} {versus[2]:>13}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panes", type=int, default=20)
    parser.add_argument("--source", choices=("raw", "casts", "both"), default="both")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--no-peer", action="store_true", help="skip the plain-emulation peer (5x slower)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per backend; the median run is shown")
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both",
                        help="the emulator backend(s) measured (new_emulator's backend=)")
    args = parser.parse_args(argv)
    if not list(RECORDINGS.glob("*.cast.gz")):
        print(f"no recordings in {RECORDINGS}: run benchmarks/record_agents.py")
        return 1
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    for source in (("raw", "casts") if args.source == "both" else (args.source,)):
        found = sessions(source, args.corpus)
        if not found:
            print(f"{source}: nothing to replay (the raw logs live in ../shared beside the repo)")
            continue
        print(f"{source}: " + "; ".join(name for name, _ in found))
        by_backend: dict[str, dict[str, float]] = {}
        for backend in backends:
            # CPU on a shared machine is noisy: the run whose emulation + detection is the median.
            runs = sorted((measure(found, args.panes, backend) for _ in range(args.repeat)),
                          key=lambda t: t["emulate"] + t["detect"])
            totals = by_backend[backend] = runs[len(runs) // 2]
            if backend == "pyte" and not args.no_peer:
                totals["plain"] = plain_emulation_cpu(found, args.panes)
            report(f"{source}, {args.panes} panes, {backend} backend (median of {args.repeat} runs)", totals)
        compare_backends(source, by_backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
