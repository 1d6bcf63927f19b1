"""How fast a hostile client can grow the daemon's log: bytes of log per request, and per hour at
the request rate measured here, for requests any token holder can send over and over.

    .venv/bin/python benchmarks/bench_log_growth.py [--requests N]

Kinds, each sent N times as fast as the daemon answers, by a view_only token:
- malformed-target: capture-pane -t %x (once a RecursionError and a 164 KB traceback per call);
- denied: send-keys, which view_only may not send (a warning line per request);
- unknown-token: a Hello with an unknown token (a warning line per connection).
The log is also checked for tracebacks, and its total size (with rotated files) is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from muxd.client.connection import Client
from muxd.errors import MuxdError
from muxd.protocol.messages import CapturePane, SendKeys
from muxd.testing.server import MuxdTestServer

BYTES_PER_GB = 1e9
SECONDS_PER_HOUR = 3600


def log_bytes(server: MuxdTestServer) -> int:
    return sum(p.stat().st_size for p in Path(server.socket_dir).glob(f"{server.name}.log*"))


async def _flood(server: MuxdTestServer, kind: str, token: str, requests: int) -> float:
    """Send `requests` of `kind`; the seconds it took."""
    started = time.monotonic()
    if kind == "unknown-token":
        for _ in range(requests):
            try:
                await (await Client.connect(server.socket_path, token="muxd_" + "u" * 43)).close()
            except MuxdError:
                pass
        return time.monotonic() - started
    client = await Client.connect(server.socket_path, token=token)
    try:
        for _ in range(requests):
            try:
                if kind == "malformed-target":
                    await client.call(CapturePane, target="%x")
                else:
                    await client.call(SendKeys, target="%0", keys=["x"])
            except MuxdError:
                pass
    finally:
        await client.close()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests of each kind (default 2000)")
    args = parser.parse_args()
    server = MuxdTestServer().start()
    try:
        server.cli("new-session", "-d", "--", "sleep", "900", check=True)
        token = server.cli("token", "create", "--tier", "view_only", check=True).stdout.split()[0]
        print(f"{'kind':<18} {'requests/s':>10} {'log B/request':>14} {'log GB/hour':>12}")
        for kind in ("malformed-target", "denied", "unknown-token"):
            before = log_bytes(server)
            took = asyncio.run(_flood(server, kind, token, args.requests))
            grown = log_bytes(server) - before
            rate = args.requests / took
            print(f"{kind:<18} {rate:>10.0f} {grown / args.requests:>14.1f} "
                  f"{grown / args.requests * rate * SECONDS_PER_HOUR / BYTES_PER_GB:>12.3f}")
        text = "".join(p.read_text(errors="replace") for p in Path(server.socket_dir).glob(f"{server.name}.log*"))
        print(f"tracebacks in the log: {text.count('Traceback')}; log files: {log_bytes(server)} bytes")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
