"""How soon `muxd mcp` (stdio) answers `initialize`, against a bare interpreter measured in the same
run (issue 27's target: within 0.5 s on a quiet machine; Codex gives a server 10 s).

    .venv/bin/python benchmarks/bench_mcp_startup.py [--runs 20]

Each run starts `muxd -L NAME mcp` against a test daemon, writes an `initialize` request and
times until its answer is read; right after it the peers run start-to-exit: `python -c pass`
(the interpreter with its site packages, as `muxd` runs) and `python -I -S -c pass` (importing
nothing), and, for scale, `python -c "import muxd.mcp_server.server"`: the SDK import that
the answer no longer waits for. Medians; ratios against the bare interpreter.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time

from _timing import run_ms

from muxd.testing.server import MuxdTestServer

TARGET_S = 0.5
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
EXIT_TIMEOUT_S = 30.0


def initialize_ms(server: MuxdTestServer) -> float:
    """Milliseconds from starting `muxd mcp` to reading its answer to `initialize`."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "muxd", "-L", server.name, "mcp"], env=server.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE.encode())
    process.stdin.flush()
    reply = process.stdout.readline()
    took = (time.perf_counter() - started) * 1000
    assert json.loads(reply)["id"] == 0, reply
    process.stdin.close()
    process.wait(EXIT_TIMEOUT_S)  # not timed: the SDK finishes importing, sees the end of input, exits
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    import muxd

    compileall.compile_dir(os.path.dirname(muxd.__file__), quiet=1)  # as pip does at install
    peers = {"python -c pass": [sys.executable, "-c", "pass"],
             "python -I -S -c pass": [sys.executable, "-I", "-S", "-c", "pass"],
             "import of the SDK (not waited for)": [sys.executable, "-c", "import muxd.mcp_server.server"]}
    server = MuxdTestServer().start()
    samples: dict[str, list[float]] = {"muxd mcp: initialize answered": [], **{name: [] for name in peers}}
    try:
        for _ in range(args.runs):
            samples["muxd mcp: initialize answered"].append(initialize_ms(server))
            for name, argv in peers.items():
                samples[name].append(run_ms(argv, server.env)[0])
    finally:
        server.stop()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    bare = medians["python -c pass"]
    print(f"{args.runs} runs each, medians (wall ms); the peers run right after each muxd mcp")
    for name, value in medians.items():
        print(f"{name:40} {value:7.1f} ms   ratio to python -c pass {value / bare:5.2f}x")
    answered = medians["muxd mcp: initialize answered"] / 1000
    print(f"initialize answered in {answered:.3f} s (target <= {TARGET_S} s on a quiet machine): "
          f"{'met' if answered <= TARGET_S else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
