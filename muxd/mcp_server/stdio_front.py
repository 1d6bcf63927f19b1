"""`muxd mcp` over stdio: answer `initialize` at once, while the SDK still imports.

Importing the MCP SDK (pydantic, starlette, anyio, …) takes most of a second on a quiet machine
and several on a loaded one, and clients give a server little time (Codex: 10 s) to answer
`initialize`. So this front imports only the standard library: it takes the wire (fds 0 and 1,
pointing them at /dev/null and stderr so nothing stray reaches it, as the SDK does), starts
the SDK's import on a thread, reads the first message, and when it is an `initialize` it
answers from identity.py. Then it gives the SDK's server the same stream with that request
replayed first, and drops the SDK's own answer to it (compared with ours: a difference is
warned about on stderr). Any other first message just goes to the SDK.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, BinaryIO

from muxd.mcp_server.identity import initialize_result

READ_CHUNK_BYTES = 65536
INITIALIZE = "initialize"


def claim_wire() -> tuple[BinaryIO, BinaryIO]:
    """The client's stream (reader, writer), taken off fds 0 and 1: fd 0 then reads /dev/null and
    fd 1 writes to stderr, so a stray print or child cannot corrupt a message."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return os.fdopen(wire_in, "rb"), os.fdopen(wire_out, "wb")


def early_answer(line: bytes) -> tuple[Any, dict[str, Any]] | None:
    """(request id, the whole reply) when `line` is an `initialize` request this front can answer."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != INITIALIZE or "id" not in message:
        return None
    result = initialize_result(message.get("params"))
    if result is None:
        return None
    return message["id"], {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class _SdkImport(threading.Thread):
    """Imports what serving needs (the SDK among it) off the thread that answers `initialize`."""

    def __init__(self) -> None:
        super().__init__(name="muxd-mcp-import", daemon=True)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            import anyio  # noqa: F401
            import muxd.mcp_server.daemon_link  # noqa: F401
            import muxd.mcp_server.server  # noqa: F401
        except BaseException as exc:  # re-raised on the main thread
            self.error = exc


class ReplayedLines:
    """The client's lines as the SDK's stdio transport reads them (`async for`), `first` ones first."""

    def __init__(self, first: list[bytes], wire: BinaryIO) -> None:
        self.first = first
        self.wire = wire

    async def __aiter__(self) -> Any:
        import anyio

        for line in self.first:
            yield line.decode("utf-8", "replace")
        while line := await anyio.to_thread.run_sync(self.wire.readline, abandon_on_cancel=True):
            yield line.decode("utf-8", "replace")


class FilteredWriter:
    """The SDK's stdio output onto the wire, less its reply to the replayed `initialize`."""

    def __init__(self, wire: BinaryIO, answered: tuple[Any, dict[str, Any]] | None) -> None:
        self.wire = wire
        self.answered = answered

    async def write(self, text: str) -> None:
        import anyio

        if self.answered is not None and self._is_replayed_reply(text):
            return
        await anyio.to_thread.run_sync(self.wire.write, text.encode())

    async def flush(self) -> None:
        import anyio

        await anyio.to_thread.run_sync(self.wire.flush)

    def _is_replayed_reply(self, text: str) -> bool:
        assert self.answered is not None
        request_id, sent = self.answered
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != request_id or "method" in message:
            return False
        self.answered = None
        theirs = {k: v for k, v in (message.get("result") or {}).items() if k != "_meta"}
        if "error" in message or theirs != sent["result"]:
            print(f"muxd mcp: warning: the SDK's initialize answer differs from the one sent: "
                  f"{json.dumps(message.get('error') or theirs)[:300]}", file=sys.stderr, flush=True)
        return True


def serve_stdio(path: str, token: str | None, limits: Any, **registry_options: Any) -> int:
    """Serve MCP on stdin/stdout for the daemon at `path`, as `token`; returns the exit code.
    `registry_options` go to server.build_registry."""
    wire_in, wire_out = claim_wire()
    loading = _SdkImport()
    loading.start()
    first = wire_in.readline()
    answered = early_answer(first) if first else None
    if answered is not None:
        wire_out.write(_encode(answered[1]))
        wire_out.flush()
    loading.join()
    if loading.error is not None:
        raise loading.error
    import anyio

    # Served even when the client left at once: a token the daemon refuses is still said (exit 1).
    lines = ReplayedLines([first] if first else [], wire_in)
    return anyio.run(_serve, path, token, limits, lines, FilteredWriter(wire_out, answered), registry_options)


async def _serve(path: str, token: str | None, limits: Any, lines: ReplayedLines, out: FilteredWriter,
                 registry_options: dict[str, Any]) -> int:
    from mcp.server.stdio import stdio_server

    from muxd.errors import ServerNotRunning
    from muxd.mcp_server.daemon_link import DaemonLink, connect_on_demand, no_server_text
    from muxd.mcp_server.server import build_registry

    link = DaemonLink(path, token)
    server = build_registry(None, limits, middleware=[connect_on_demand(link)], **registry_options).server
    try:
        await link.ensure()
    except ServerNotRunning as exc:
        print(f"muxd mcp: {no_server_text(exc, path)}; tools answer so until one runs", file=sys.stderr, flush=True)
    # What MCPServer.run_stdio_async does, on these streams instead of fds 0 and 1 (already taken).
    lowlevel = server._lowlevel_server  # noqa: SLF001 - the SDK runs given streams only at this level
    try:
        async with stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        await link.close()
    return 0
