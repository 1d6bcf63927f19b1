"""How long a `wait_for` with a catastrophic regex takes, against the same wait with a plain one.

    .venv/bin/python benchmarks/bench_wait_redos.py               # gives up on a call after 60 s
    .venv/bin/python benchmarks/bench_wait_redos.py --give-up 20

A pane shows one line of 60 `a`; `muxd mcp --http` serves a view_only token. Two calls of
`wait_for` with `timeout_s` 1, neither of which can match, each timed from the client:
- peer: `^b+$`, a pattern any engine dismisses at once;
- redos: `^(a|aa)+$x`, which a backtracking engine explores in 2^60 ways before failing.
While the redos call runs, a second client calls `list_panes` over and over; its slowest
answer is printed (a frozen server answers nobody). A call still unanswered after `--give-up`
seconds is reported as ">N s" and the server is killed. The ratio is redos ÷ peer.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from mcp import ClientSession

from muxd.testing.mcp_http import HttpMcp, create_token
from muxd.testing.server import MuxdTestServer

LINE = "a" * 60
PEER_PATTERN = r"^b+$"
REDOS_PATTERN = r"^(a|aa)+$x"
WAIT_TIMEOUT_S = 1.0
GIVE_UP_S_DEFAULT = 60.0


async def _timed_wait(session: ClientSession, pattern: str) -> tuple[float, Any]:
    started = time.monotonic()
    result = await session.call_tool("wait_for", {"pane_id": "aaa", "pattern": pattern, "timeout_s": WAIT_TIMEOUT_S})
    return time.monotonic() - started, result.structured_content


async def _measure(mcp: HttpMcp, token: str, give_up_s: float) -> dict[str, Any]:
    # The HTTP client must not give up (30 s by default) before the benchmark does.
    http_timeout_s = give_up_s + 10
    async with mcp.session(token, timeout_s=http_timeout_s) as waiter, \
            mcp.session(token, timeout_s=http_timeout_s) as other:
        peer_s, _ = await _timed_wait(waiter, PEER_PATTERN)
        wait = asyncio.create_task(_timed_wait(waiter, REDOS_PATTERN))
        started = time.monotonic()
        slowest_other_s, others = 0.0, 0
        while not wait.done() and time.monotonic() - started < give_up_s:
            call_started = time.monotonic()
            try:
                await asyncio.wait_for(other.call_tool("list_panes", {}), give_up_s)
                others += 1
            except Exception:  # no answer in time (ours, or the HTTP client's own read timeout)
                break
            finally:
                slowest_other_s = max(slowest_other_s, time.monotonic() - call_started)
        done, _ = await asyncio.wait({wait}, timeout=max(0.0, give_up_s - (time.monotonic() - started)))
        if not done:
            mcp.process.kill()  # the server is frozen: nothing else will end the call
            raise TimeoutError
        redos_s, answer = wait.result()
        return {"peer_s": peer_s, "redos_s": redos_s, "answer": answer, "other_slowest_s": slowest_other_s,
                "other_calls": others}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--give-up", type=float, default=GIVE_UP_S_DEFAULT, help="seconds before a call counts as lost")
    args = parser.parse_args()
    server = MuxdTestServer().start()
    mcp: HttpMcp | None = None
    try:
        server.cli("new-session", "-d", "--name", "aaa", "--", sys.executable, "-c",
                   f"print({LINE!r}); import time; time.sleep(3600)", check=True)
        server.wait_for_text("aaa", LINE)
        token = create_token(server, "view_only")
        mcp = HttpMcp(server)
        try:
            figures = asyncio.run(_measure(mcp, token, args.give_up))
        except (TimeoutError, Exception) as exc:  # a killed server fails the open sessions every way
            if mcp.process.poll() is None:
                raise
            print(f"redos wait_for: >{args.give_up:g} s (server frozen, killed; {type(exc).__name__})")
            return 0
        print(f"peer  wait_for {PEER_PATTERN!r:16} timeout_s={WAIT_TIMEOUT_S:g}: {figures['peer_s']:.3f} s")
        print(f"redos wait_for {REDOS_PATTERN!r:16} timeout_s={WAIT_TIMEOUT_S:g}: {figures['redos_s']:.3f} s "
              f"(matched={figures['answer'].get('matched')}, reason={figures['answer'].get('reason')})")
        print(f"ratio redos / peer: {figures['redos_s'] / figures['peer_s']:.2f}")
        print(f"another client meanwhile: {figures['other_calls']} list_panes, slowest "
              f"{figures['other_slowest_s'] * 1000:.0f} ms")
        return 0
    finally:
        if mcp is not None and mcp.process.poll() is None:
            mcp.stop()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
