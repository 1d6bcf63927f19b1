"""A daemon connection outlives a request its caller gave up on (seed 003's 2 s upstream bound,
the guards' call timeout): the late reply, an error included, is dropped, not taken for an error
of the whole connection. Against a real Unix socket server that holds its first answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from muxd.client.connection import Client
from muxd.config import PROTOCOL_VERSION
from muxd.protocol.codec import decode_request, encode
from muxd.protocol.execution_messages import ExecutionList, ListExecutions
from muxd.protocol.framing import FrameDecoder
from muxd.protocol.messages import Error, Hello, Welcome
from muxd.testing.patience import patient_wait_for

GAVE_UP_AFTER_S = 0.2  # the caller's bound on the held request (the server answers it only later)
TEST_TIMEOUT_S = 20


async def _late_error(path: Path) -> None:
    held: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = FrameDecoder()
        while data := await reader.read(65536):
            for body in decoder.feed(data):
                request = decode_request(body)
                if isinstance(request, Hello):
                    writer.write(encode(Welcome(id=request.id, protocol_version=PROTOCOL_VERSION,
                                                server_version="test", principal="system", pid=0)))
                elif not held:
                    held.append(request.id)  # stalled: no answer until the next request comes
                else:
                    # The first request's answer comes late, an error, before the second's.
                    writer.write(encode(Error(id=held[0], code="bad_request", message="late")))
                    writer.write(encode(ExecutionList(id=request.id, executions=[], total=7)))
            await writer.drain()

    server = await asyncio.start_unix_server(serve, path=str(path))
    async with server:
        client = await Client.connect(path)
        try:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call(ListExecutions), GAVE_UP_AFTER_S)
            second = await patient_wait_for(client.call(ListExecutions), TEST_TIMEOUT_S)
            assert second.total == 7 and not client.closed
        finally:
            await client.close()


def test_a_late_error_to_an_abandoned_request_leaves_the_connection_serving(tmp_path: Path) -> None:
    asyncio.run(_late_error(tmp_path / "s"))
