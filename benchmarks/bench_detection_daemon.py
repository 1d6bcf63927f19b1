"""What agent detection costs inside the daemon: the same panes with detection on and off.

    .venv/bin/python benchmarks/bench_detection_daemon.py [--panes 20] [--seconds 30] [--rate 2048]

--panes panes each replay one of the corpus's raw agent session logs (../shared/corpus/real)
into a real PTY at --rate bytes per second in 256-byte writes (agent TUIs redraw their
spinners continuously), for --seconds. The daemon's CPU time (utime+stime from /proc) is
measured for a run with detection and for one without (MUXD_DETECTION=0); the difference
is what detection costs. Printed per pane-second of session.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
CHUNK_BYTES = 256
# The pane's program: write the log in paced chunks with output processing off (the log
# already has the CR LF a terminal saw), then stay so the pane stays alive to the end.
PACER = r"""
import os, sys, termios, time
path, rate, seconds, chunk = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
attrs = termios.tcgetattr(1); attrs[1] &= ~termios.OPOST; termios.tcsetattr(1, termios.TCSANOW, attrs)
data = open(path, "rb").read()
start = time.monotonic(); offset = 0; n = 0
while time.monotonic() - start < seconds:
    piece = data[offset:offset + chunk] or data[:chunk]
    offset = offset + chunk if offset + chunk < len(data) else 0
    os.write(1, piece); n += 1
    time.sleep(max(0.0, start + n * chunk / rate - time.monotonic()))
"""


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def run(logs: list[Path], panes: int, seconds: float, rate: float, detection: bool) -> float:
    server = MuxdTestServer(env={"MUXD_DETECTION": "1" if detection else "0"}).start()
    try:
        assert server.pid is not None
        before = cpu_seconds(server.pid)
        for n in range(panes):
            server.cli("new-session", "-d", "-s", f"p{n}", "-x", "120", "-y", "40", "--", sys.executable,
                       "-c", PACER, str(logs[n % len(logs)]), str(rate), str(seconds), str(CHUNK_BYTES),
                       check=True)
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
    parser.add_argument("--rate", type=float, default=2048.0, help="bytes per second per pane")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    logs = sorted(args.corpus.glob("*/*_raw.bin"))
    if not logs:
        print(f"no raw logs under {args.corpus} (they live in ../shared beside the repo)")
        return 1
    pane_seconds = args.panes * args.seconds
    started = time.monotonic()
    off = run(logs, args.panes, args.seconds, args.rate, detection=False)
    on = run(logs, args.panes, args.seconds, args.rate, detection=True)
    print(f"{args.panes} panes x {args.seconds:.0f} s of {', '.join(p.parent.name for p in logs)} logs "
          f"at {args.rate:.0f} B/s each ({pane_seconds:.0f} pane-seconds; took {time.monotonic() - started:.0f} s)")
    print(f"daemon CPU without detection {off:6.2f} s  {off / pane_seconds * 1e3:6.2f} ms per pane-second")
    print(f"daemon CPU with detection    {on:6.2f} s  {on / pane_seconds * 1e3:6.2f} ms per pane-second")
    print(f"detection adds {(on - off) / pane_seconds * 1e3:.2f} ms per pane-second: "
          f"{(on - off) / off:+.1%} of the daemon's cost without it (target < 10 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
