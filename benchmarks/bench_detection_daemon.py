"""What agent detection costs inside the daemon: the same panes with detection on and off.

    .venv/bin/python benchmarks/bench_detection_daemon.py [--panes 20] [--seconds 30] [--repeat N]

--panes panes each play one of the project's recordings of the real agent CLIs
(benchmarks/data/agents/*.cast.gz, made at real speed by record_agents.py) into a real PTY at
its recorded timing, looping, for --seconds. The daemon's CPU time (utime+stime from /proc) is
measured for a run with detection and for one without (MUXD_DETECTION=0); the difference is
what detection costs. Printed per pane-second of session.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

RECORDINGS = Path(__file__).resolve().parent / "data" / "agents"
# The pane's program: write the recording's output events at their recorded times with output
# processing off (they already hold the CR LF a terminal saw), looping until --seconds pass.
PLAYER = r"""
import gzip, json, os, sys, termios, time
path, seconds = sys.argv[1], float(sys.argv[2])
attrs = termios.tcgetattr(1); attrs[1] &= ~termios.OPOST; termios.tcsetattr(1, termios.TCSANOW, attrs)
lines = gzip.decompress(open(path, "rb").read()).decode().splitlines()[1:]
events = [(e[0], e[2].encode()) for e in map(json.loads, lines) if e[1] == "o"]
length = events[-1][0] + 1.0
start = time.monotonic(); loop = 0
while True:
    for when, data in events:
        moment = start + loop * length + when
        if moment - start > seconds:
            sys.exit(0)
        time.sleep(max(0.0, moment - time.monotonic()))
        os.write(1, data)
    loop += 1
"""


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def run(casts: list[Path], panes: int, seconds: float, detection: bool) -> float:
    server = MuxdTestServer(env={"MUXD_DETECTION": "1" if detection else "0"}).start()
    try:
        assert server.pid is not None
        before = cpu_seconds(server.pid)
        for n in range(panes):
            server.cli("new-session", "-d", "-s", f"p{n}", "-x", "120", "-y", "40", "--", sys.executable,
                       "-c", PLAYER, str(casts[n % len(casts)]), str(seconds), check=True)
        wait_until(lambda: all(p["status"] == "exited" for p in json.loads(
            server.cli("list-panes", "-a", "--json", check=True).stdout)),
            timeout=seconds + 60, interval=1.0, message="every pacer finished")
        return cpu_seconds(server.pid) - before
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panes", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=1, help="off/on pairs to run; medians are printed")
    args = parser.parse_args(argv)
    casts = sorted(RECORDINGS.glob("*.cast.gz"))
    if not casts:
        print(f"no recordings in {RECORDINGS}: run benchmarks/record_agents.py")
        return 1
    pane_seconds = args.panes * args.seconds
    started = time.monotonic()
    offs: list[float] = []
    ons: list[float] = []
    for _ in range(args.repeat):  # alternated, so drifting load on the machine hits both alike
        offs.append(run(casts, args.panes, args.seconds, detection=False))
        ons.append(run(casts, args.panes, args.seconds, detection=True))
    off, on = statistics.median(offs), statistics.median(ons)
    names = ", ".join(p.name.split(".")[0] for p in casts)
    print(f"{args.panes} panes x {args.seconds:.0f} s of the {names} recordings at recorded speed "
          f"({pane_seconds:.0f} pane-seconds; {args.repeat} run(s) each, medians; took {time.monotonic() - started:.0f} s)")
    print(f"daemon CPU without detection {off:6.2f} s  {off / pane_seconds * 1e3:6.2f} ms per pane-second"
          + (f"  (runs: {', '.join(f'{x:.2f}' for x in offs)})" if args.repeat > 1 else ""))
    print(f"daemon CPU with detection    {on:6.2f} s  {on / pane_seconds * 1e3:6.2f} ms per pane-second"
          + (f"  (runs: {', '.join(f'{x:.2f}' for x in ons)})" if args.repeat > 1 else ""))
    print(f"detection adds {(on - off) / pane_seconds * 1e3:.2f} ms per pane-second: "
          f"{(on - off) / off:+.1%} of the daemon's cost without it (target < 10 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
