"""Test and benchmark support: run `muxd mcp` (HTTP or stdio, with flags) against a test daemon
and talk to it with the real SDK clients."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO

import httpx2
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from muxd.testing.patience import Deadline, stretched, wait_process
from muxd.testing.server import MuxdTestServer

START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
HTTP_TIMEOUT_S = 30.0  # the SDK client's wait for any one HTTP answer
_SERVING = re.compile(r"muxd mcp: serving (http://\S+)")


class HttpMcp:
    """A `muxd mcp --http 127.0.0.1:0` subprocess of a test server; its stderr is kept in `log`."""

    def __init__(self, server: MuxdTestServer, *args: str, address: str = "127.0.0.1:0") -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "muxd", "-L", server.name, "mcp", "--http", address, *args],
            env=server.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        assert self.process.stderr is not None
        threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True).start()
        self.url = self._wait_for_address()

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self.log.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def _wait_for_address(self) -> str:
        deadline = Deadline(START_TIMEOUT_S)
        while not deadline.expired():
            try:
                line = self._lines.get(timeout=deadline.next_wait_s())
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"muxd mcp --http exited ({self.process.wait()}): {''.join(self.log)}")
            found = _SERVING.search(line)
            if found:
                return found.group(1)
        self.process.kill()
        raise AssertionError(f"muxd mcp --http printed no address in {deadline.describe()}: {''.join(self.log)}")

    @property
    def metrics_url(self) -> str:
        return self.url.rsplit("/", 1)[0] + "/metrics"

    @asynccontextmanager
    async def session(self, token: str, *, timeout_s: float = HTTP_TIMEOUT_S) -> AsyncIterator[ClientSession]:
        """An initialized SDK client session presenting `token` as its bearer token."""
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=stretched(timeout_s)) as http, \
                streamable_http_client(self.url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session

    @asynccontextmanager
    async def client(self, token: str, *, timeout_s: float = HTTP_TIMEOUT_S) -> AsyncIterator[Client]:
        """The SDK's high-level Client presenting `token`, speaking the newest revision both know
        (2026-07-28: subscriptions/listen)."""
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=stretched(timeout_s)) as http, \
                Client(streamable_http_client(self.url, http_client=http), mode="auto") as client:
            yield client

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the server and return its exit code (killed after STOP_TIMEOUT_S)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                return wait_process(self.process, STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"muxd mcp --http ignored signal {sig}: {''.join(self.log)}") from None
        return self.process.returncode


@asynccontextmanager
async def stdio_session(server: MuxdTestServer, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    """An initialized client session with `muxd mcp ARGS…` over stdio, extra environment `env`."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "muxd", "-L", server.name, "mcp", *args],
                                   env={**server.env, **env})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_mcp_client(server: MuxdTestServer, *args: str, **env: str) -> AsyncIterator[Client]:
    """The SDK's high-level Client of `muxd mcp ARGS…` over stdio, speaking the newest revision both
    know (2026-07-28: subscriptions/listen); extra environment `env`."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "muxd", "-L", server.name, "mcp", *args],
                                   env={**server.env, **env})
    async with Client(params, mode="auto") as client:
        yield client


def create_token(server: MuxdTestServer, tier: str, name: str | None = None, *extra: str) -> str:
    """A new token of `tier` from `muxd token create` (and `extra` options, e.g. --pane %1): its secret."""
    args = ["token", "create", "--tier", tier] + (["--name", name] if name else []) + list(extra)
    out = server.cli(*args)
    if out.returncode != 0:
        raise AssertionError(f"muxd token create failed: {out.stderr}")
    words = out.stdout.split()
    secret = next((w for w in words if w.startswith("muxd_")), words[-1] if words else "")
    assert secret, f"muxd token create printed no secret: {out.stdout!r}"
    return secret
