"""Input for a program that never reads it is capped: send-keys past the cap gets a clear
conflict, the daemon's memory stays put, and everyone else is still served."""

from __future__ import annotations

import asyncio

import pytest

from muxd.config import PANE_INPUT_PENDING_MAX_BYTES, SEND_KEYS_MAX_BYTES
from muxd.errors import Conflict
from muxd.protocol.messages import SendKeys
from muxd.testing.patience import patient_wait_for
from muxd.testing.proc import rss_kib

SENDS = 100
CALL_TIMEOUT_S = 10.0
# 100 sends of 1 MiB grew the daemon by ~100 MiB before the cap; now by the cap plus what
# decoding a 1 MiB request leaves in the allocator.
RSS_GROWTH_MAX_KIB = 32 * 1024


async def _flood_input(server) -> list[Conflict]:
    client = await server.client()
    refusals = []
    try:
        for _ in range(SENDS):
            try:
                await patient_wait_for(client.call(SendKeys, target="deaf", keys=["x" * SEND_KEYS_MAX_BYTES],
                                                   literal=True), CALL_TIMEOUT_S)
            except Conflict as exc:
                refusals.append(exc)
        return refusals
    finally:
        await client.close()


def test_send_keys_to_a_program_that_never_reads_is_refused_past_the_cap(muxd_server):
    s = muxd_server
    # Raw mode, as a full-screen program's: the terminal keeps only ~4 KiB of unread input
    # (a cooked one discards past its line buffer), the rest waits in the daemon.
    s.cli("new-session", "-d", "-s", "deaf", "--", "sh", "-c", "stty raw -echo; echo DEAF; exec sleep 600",
          check=True)
    s.wait_for_text("deaf", "DEAF")
    s.cli("new-session", "-d", "-s", "other", "--", "cat", check=True)
    before = rss_kib(s.pid)
    refusals = asyncio.run(_flood_input(s))
    accepted = SENDS - len(refusals)
    assert 1 <= accepted <= PANE_INPUT_PENDING_MAX_BYTES // SEND_KEYS_MAX_BYTES + 1, accepted
    message = refusals[0].message
    assert "%0 is not reading its input" in message and "bytes already waiting" in message
    assert refusals[0].detail["waiting_bytes"] >= SEND_KEYS_MAX_BYTES
    assert rss_kib(s.pid) - before < RSS_GROWTH_MAX_KIB
    # The CLI says so in one line, with a failing status (the terminal took a few KiB itself,
    # so a little more input would still fit).
    out = s.cli("send-keys", "-t", "deaf", "-l", "z" * 65536)
    assert out.returncode != 0
    assert out.stderr.strip().count("\n") == 0 and "is not reading its input" in out.stderr
    # A pane that reads is not affected.
    s.cli("send-keys", "-t", "other", "still-served", "Enter", check=True)
    s.wait_for_text("other", "still-served")


@pytest.mark.parametrize("size", [1, SEND_KEYS_MAX_BYTES])
def test_input_within_the_cap_reaches_a_program_that_reads(muxd_server, size):
    s = muxd_server
    s.cli("new-session", "-d", "-s", "reader", "--", "sh", "-c",
          f'stty raw -echo; echo READING; echo "got $(head -c {size} | wc -c) bytes"; exec sleep 600', check=True)
    s.wait_for_text("reader", "READING")

    async def send() -> None:
        client = await s.client()
        try:
            await client.call(SendKeys, target="reader", keys=["y" * size], literal=True)
        finally:
            await client.close()

    asyncio.run(send())
    s.wait_for_text("reader", f"got {size} bytes")
