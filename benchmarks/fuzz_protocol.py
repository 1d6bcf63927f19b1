"""The protocol fuzzer at length: N frames (or S seconds) of hostile input to a private daemon.

    .venv/bin/python benchmarks/fuzz_protocol.py                     # 20,000 frames, seed 1
    .venv/bin/python benchmarks/fuzz_protocol.py --seconds 300 --seed 7

Frames come from muxd/testing/protocol_fuzz.py (valid requests with mutated fields, wrong
types, unknown tags, invalid UTF-8, deep nesting, huge and lying lengths, random bodies,
framing damage), sent over a series of connections that read as they write. Prints the frames
sent, the replies by code, replies missing, connections the daemon dropped, tracebacks in the
daemon's log, the daemon's RSS before and after (and its peak), and whether it still serves
a normal client. Exit status 1 when any of those shows a defect.
"""

from __future__ import annotations

import argparse
import sys
import time

from muxd.testing.proc import peak_rss_kib, rss_kib, traceback_causes, tracebacks_in
from muxd.testing.protocol_fuzz import (
    FUZZ_PANE, FUZZ_PANE_COMMAND, FUZZ_SESSION, FrameFuzzer, ProtocolFuzzRun,
)
from muxd.testing.server import MuxdTestServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--frames", type=int, default=None, help="frames to send (default 20000)")
    parser.add_argument("--seconds", type=float, default=None, help="run this long instead")
    args = parser.parse_args()
    frames = args.frames if args.frames is not None or args.seconds is not None else 20_000
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "-s", FUZZ_SESSION, "--", *FUZZ_PANE_COMMAND, check=True)
        before = rss_kib(server.pid)
        started = time.monotonic()
        run = ProtocolFuzzRun(server.socket_path, FrameFuzzer(args.seed, FUZZ_PANE, FUZZ_SESSION))
        tally = run.run(frames=frames, seconds=args.seconds)
        elapsed = time.monotonic() - started
        alive = server.running() and server.cli("list-panes", "-a").returncode == 0
        after, peak = (rss_kib(server.pid), peak_rss_kib(server.pid)) if server.running() else (0, 0)
        log_text = server.log_path.read_text()
        tracebacks = tracebacks_in(log_text)
    finally:
        server.stop()
    print(f"seed {args.seed}, {elapsed:.1f} s")
    print(tally.summary())
    print("frames by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.kinds.items())))
    print(f"tracebacks in the daemon's log: {tracebacks}")
    for cause, count in traceback_causes(log_text).most_common(5):
        print(f"  {count} x {cause}")
    print(f"daemon RSS: before {before / 1024:.1f} MiB, after {after / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB")
    print(f"daemon still serves a normal client: {'yes' if alive else 'NO'}")
    defects = (tally.replies_missing or tally.connections_dropped or tally.left_open or tracebacks
               or not alive or tally.replies_by_code.get("internal"))
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
