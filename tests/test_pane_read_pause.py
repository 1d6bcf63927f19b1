"""A real Pane on a real PTY while someone types elsewhere: a flood nobody attends is read in
pauses (its program blocks on the full PTY meanwhile), one a person is at is read on; and the
PTY's waiting bytes are told without a read."""

from __future__ import annotations

import asyncio
import os
import pty
import sys

import pytest

from muxd.config import PANE_PACED_READ_BYTES
from muxd.daemon.panes import pane as pane_module
from muxd.daemon.panes import pty as ptys
from muxd.daemon.panes.emulation import EmulationTurns
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import process_alive
from muxd.testing.wait import WaitTimeout, async_wait_until, wait_until

from test_pane import NO_GROWTH_WATCH_S, TEST_TIMEOUT_S, TurnGate, make_pane

# Long enough that no pause ends within the test: what is read after the first read is the
# pause's doing or not.
LONG_PAUSE_S = 600.0
FLOOD = [sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 79 + '\\n')"]


async def _reads_while(someone_types: bool, attended: bool) -> tuple[list[int], bool]:
    """(the sizes of the reads that took output within the growth watch, whether the program is
    then alive);
    the turns are held, so nothing of it is emulated."""
    gate = TurnGate()
    turns = EmulationTurns(call_soon=gate.call_soon)
    turns.someone_typing = lambda: someone_types
    turns.attended = lambda sink: attended
    turns.after_attended = lambda sink: None
    pane = make_pane(FLOOD, turns, on_exit=lambda p: None)
    reads: list[int] = []
    pane.output_taps.append(lambda data: reads.append(len(data)))  # told once a read
    pane.start(asyncio.get_running_loop())
    try:
        async def read_again() -> bool:
            return len(reads) > 1
        try:
            await async_wait_until(read_again, timeout=NO_GROWTH_WATCH_S)
        except WaitTimeout:
            pass
        assert pane.pid is not None
        return reads, process_alive(pane.pid)
    finally:
        pane.close()


@pytest.fixture
def long_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pane_module, "PANE_READ_PAUSE_S", LONG_PAUSE_S)


def test_a_flood_nobody_attends_is_not_read_during_its_pause_while_someone_types(long_pause: None) -> None:
    reads, alive = asyncio.run(patient_wait_for(_reads_while(someone_types=True, attended=False), TEST_TIMEOUT_S))
    assert len(reads) == 1 and reads[0] <= PANE_PACED_READ_BYTES, reads  # one PTY's fill, then the pause
    assert alive  # blocked on its full PTY, not gone


@pytest.mark.parametrize(("someone_types", "attended"), [(False, False), (True, True)],
                         ids=["nobody-types", "the-pane-typed-into"])
def test_a_pane_is_read_on_when_nobody_types_or_it_is_the_one_typed_into(long_pause: None, someone_types: bool,
                                                                        attended: bool) -> None:
    reads, _ = asyncio.run(patient_wait_for(_reads_while(someone_types, attended), TEST_TIMEOUT_S))
    assert len(reads) > 1


def test_readable_bytes_tells_what_a_read_would_return_at_once() -> None:
    master, slave = pty.openpty()
    try:
        os.write(slave, b"hello")
        wait_until(lambda: ptys.readable_bytes(master) == 5, timeout=10, message="the PTY holding 5 bytes")
        assert os.read(master, 100) == b"hello"
        assert ptys.readable_bytes(master) == 0
    finally:
        os.close(master)
        os.close(slave)
    assert ptys.readable_bytes(master) == 0  # a closed fd: nothing to read
