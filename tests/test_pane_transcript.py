"""A real Pane on a real PTY keeps the running execution's transcript itself (no tap call per
read): the first bytes up to the cap, in order, the rest counted and marked truncated."""

from __future__ import annotations

import asyncio
import sys

from muxd.daemon.panes.emulation import EmulationTurns
from muxd.daemon.panes.pane import Pane
from muxd.executions.transcript import TranscriptBuffer
from muxd.testing.patience import patient_wait_for
from muxd.testing.wait import async_wait_until

from test_pane import TEST_TIMEOUT_S, make_pane

LINES = 2000  # "line N\n" each: about 17 KB
FIRST_LINES = 300  # about 2.6 KB, under the cap: written, then the program waits for a line of input
CAP = 5000
PROGRAM = [sys.executable, "-c",
           "import sys\n"
           f"for n in range({FIRST_LINES}): sys.stdout.write(f'line {{n}}\\n')\n"
           "sys.stdout.flush(); sys.stdin.readline()\n"
           f"for n in range({FIRST_LINES}, {LINES}): sys.stdout.write(f'line {{n}}\\n')"]


async def _run(transcript: TranscriptBuffer | None) -> bytes:
    """What the pane's program wrote (as its reads told a tap), once it exited and all was read."""
    exited: list[Pane] = []
    pane = make_pane(PROGRAM, EmulationTurns(), on_exit=exited.append)
    pane.transcript = transcript
    tapped: list[bytes] = []
    pane.output_taps.append(tapped.append)
    pane.start(asyncio.get_running_loop())
    try:
        # Its first part is read before it writes the rest: at least two reads, the first under the cap.
        async def first_part_read() -> bool:
            return f"line {FIRST_LINES - 1}\n".encode() in b"".join(tapped).replace(b"\r\n", b"\n")
        await async_wait_until(first_part_read, timeout=TEST_TIMEOUT_S, message="the program's first part read")
        pane.write(b"\n")

        async def gone() -> bool:
            return bool(exited)
        await async_wait_until(gone, timeout=TEST_TIMEOUT_S, message="the program exited and was read")
        return b"".join(tapped)
    finally:
        pane.close()


def test_a_pane_keeps_its_transcript_up_to_the_cap_and_counts_the_rest() -> None:
    transcript = TranscriptBuffer(80, 24, cap_bytes=CAP)
    written = asyncio.run(patient_wait_for(_run(transcript), TEST_TIMEOUT_S))
    assert len(written) > 2 * CAP and len(transcript.chunks) > 1  # two reads at least, past the cap
    assert (transcript.kept, transcript.seen, transcript.truncated) == (CAP, len(written), True)
    stored = transcript.finish()
    assert stored.raw() == written[:CAP] and stored.raw_bytes == CAP and stored.truncated


def test_a_transcript_under_its_cap_is_the_whole_output() -> None:
    transcript = TranscriptBuffer(80, 24, cap_bytes=1 << 20)
    written = asyncio.run(patient_wait_for(_run(transcript), TEST_TIMEOUT_S))
    stored = transcript.finish()
    assert stored.raw() == written and not stored.truncated
    assert written.replace(b"\r\n", b"\n").endswith(f"line {LINES - 1}\n".encode())

