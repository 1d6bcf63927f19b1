"""Test support: an HTTP/1.1 forwarder that adds `Authorization: Bearer TOKEN` to every request.

For clients that cannot send headers, such as the MCP conformance suite, in front of
`muxd mcp --http` (which wants a muxd token on every request). It rewrites only request heads;
bodies (Content-Length) and answers (SSE streams too) pass through as they are. It runs its
own event loop on a thread, so a test may block on a subprocess meanwhile.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

from muxd.testing.patience import event_set, stretched

HEAD_END = b"\r\n\r\n"
READ_CHUNK_BYTES = 65536
START_TIMEOUT_S = 10.0


class BearerProxy:
    """Listens on 127.0.0.1 (a free port: `url`) and forwards to `upstream` (host, port)."""

    def __init__(self, upstream: tuple[str, int], token: str) -> None:
        self.upstream = upstream
        self.header = f"Authorization: Bearer {token}".encode()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._run, name="bearer-proxy", daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> BearerProxy:
        self._thread.start()
        if not event_set(self._ready, START_TIMEOUT_S):
            raise AssertionError(f"the bearer proxy did not listen within {START_TIMEOUT_S}s of machine time")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(stretched(START_TIMEOUT_S))

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())
        self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
        for task in self._connections:  # streams a client left open (SSE): cut
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _connection(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            upstream_in, upstream_out = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_out.close()
            return
        try:
            await asyncio.gather(self._requests(client_in, upstream_out), _pipe(upstream_in, client_out))
        except asyncio.CancelledError:
            pass  # the proxy stops: this task is the connection's own, nobody awaits its cancellation
        finally:
            upstream_out.close()
            client_out.close()
            self._connections.discard(task)

    async def _requests(self, client_in: asyncio.StreamReader, upstream_out: asyncio.StreamWriter) -> None:
        """Each request of the connection: its head with our Authorization, then its body."""
        try:
            while True:
                head = await client_in.readuntil(HEAD_END)
                lines = head[:-len(HEAD_END)].split(b"\r\n")
                kept = [line for line in lines if not line.lower().startswith(b"authorization:")]
                length = next((int(line.split(b":", 1)[1]) for line in kept[1:]
                               if line.lower().startswith(b"content-length:")), 0)
                upstream_out.write(b"\r\n".join([*kept, self.header]) + HEAD_END)
                if length:
                    upstream_out.write(await client_in.readexactly(length))
                await upstream_out.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            upstream_out.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(READ_CHUNK_BYTES):
            sink.write(data)
            await sink.drain()
    except ConnectionError:
        pass
    finally:
        sink.close()
