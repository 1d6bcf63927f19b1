"""A real Pane on a real PTY while someone types elsewhere: a flood nobody attends is read in
pauses (its program blocks on the full PTY meanwhile), one a person is at is read on; a pane only
watched (an attached client's active pane, not typed into) reads slow output about once a frame,
input ends that pause, and a flood is never paused so; and the PTY's waiting bytes are told
without a read."""

from __future__ import annotations

import asyncio
import os
import pty
import sys

import pytest

from muxd.config import PANE_PACED_READ_BYTES, PANE_WATCHED_READ_PAUSE_S
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
# A program writing a short line every few ms, as a TUI redraws (its output is slow).
TICKER = [sys.executable, "-c", "import sys, time\nwhile True:\n print('tick', flush=True)\n time.sleep(0.003)"]


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


async def _watched_reads(*, typed: bool, type_after_first_read: bool = False,
                         catch_up_after_first_read: bool = False) -> list[int]:
    """The sizes of the reads of TICKER's output within the growth watch, in a pane an attached
    client shows (`typed`: and its input came just now); `type_after_first_read` writes a key
    to the pane once the first read is in; `catch_up_after_first_read` has a frame catch it up
    (Pane.catch_up) once output waits again."""
    gate = TurnGate()
    turns = EmulationTurns(call_soon=gate.call_soon)
    turns.watched = lambda sink: True
    pane = make_pane(TICKER, turns, on_exit=lambda p: None)
    reads: list[int] = []
    pane.output_taps.append(lambda data: reads.append(len(data)))
    pane.start(asyncio.get_running_loop())

    async def read(times: int) -> bool:
        return len(reads) >= times
    try:
        if typed:
            pane.typed_at = float("inf")  # input came just now, all along
        await async_wait_until(lambda: read(1), timeout=TEST_TIMEOUT_S)
        if type_after_first_read:
            pane.write(b" ")
        if catch_up_after_first_read:
            assert pane._process is not None
            fd = pane._process.master_fd
            await async_wait_until(lambda: _true(ptys.readable_bytes(fd) > 0), timeout=TEST_TIMEOUT_S)
            assert pane.catch_up()
        try:
            await async_wait_until(lambda: read(2), timeout=NO_GROWTH_WATCH_S)
        except WaitTimeout:
            pass
        return reads
    finally:
        pane.close()


@pytest.fixture
def long_watched_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pane_module, "PANE_WATCHED_READ_PAUSE_S", LONG_PAUSE_S)


def test_a_watched_pane_with_slow_output_is_not_read_again_until_its_pause_ends(long_watched_pause: None) -> None:
    reads = asyncio.run(patient_wait_for(_watched_reads(typed=False), TEST_TIMEOUT_S))
    assert len(reads) == 1 and reads[0] < PANE_PACED_READ_BYTES, reads


def test_a_watched_pane_typed_into_is_read_on(long_watched_pause: None) -> None:
    reads = asyncio.run(patient_wait_for(_watched_reads(typed=True), TEST_TIMEOUT_S))
    assert len(reads) > 1


def test_input_to_a_watched_pane_ends_its_pause(long_watched_pause: None) -> None:
    reads = asyncio.run(patient_wait_for(_watched_reads(typed=False, type_after_first_read=True), TEST_TIMEOUT_S))
    assert len(reads) > 1


def test_a_frame_catches_a_watched_pane_up_during_its_pause(long_watched_pause: None) -> None:
    """The viewer's frame reads what a watched pane holds back (AttachedClient._catch_up): the
    frame shows it, in the same wakeup, rather than the pause's end reading it after."""
    reads = asyncio.run(patient_wait_for(_watched_reads(typed=False, catch_up_after_first_read=True),
                                         TEST_TIMEOUT_S))
    assert len(reads) >= 2


def test_catching_up_a_pane_that_is_read_on_reads_nothing(long_watched_pause: None) -> None:
    async def caught_up() -> bool:
        pane = make_pane(TICKER, EmulationTurns(), on_exit=lambda p: None)  # nobody watches it
        pane.start(asyncio.get_running_loop())
        try:
            return pane.catch_up()  # its reader takes the output as it comes
        finally:
            pane.close()
    assert not asyncio.run(caught_up())


def test_a_flood_paced_while_someone_types_is_not_caught_up_by_a_frame(long_pause: None) -> None:
    async def caught_up() -> bool:
        turns = EmulationTurns(call_soon=TurnGate().call_soon)
        turns.someone_typing = lambda: True
        turns.attended = lambda sink: False
        pane = make_pane(FLOOD, turns, on_exit=lambda p: None)
        reads: list[int] = []
        pane.output_taps.append(lambda data: reads.append(len(data)))
        pane.start(asyncio.get_running_loop())
        try:
            await async_wait_until(lambda: _true(len(reads) == 1), timeout=TEST_TIMEOUT_S)
            assert pane._process is not None
            fd = pane._process.master_fd
            await async_wait_until(lambda: _true(ptys.readable_bytes(fd) > 0), timeout=TEST_TIMEOUT_S)
            return pane.catch_up()
        finally:
            pane.close()
    assert not asyncio.run(patient_wait_for(caught_up(), TEST_TIMEOUT_S))


async def _true(value: bool) -> bool:
    return value


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_output_counts_as_slow_only_while_two_pauses_worth_stayed_under_a_ptys_fill(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pane = make_pane(["true"], EmulationTurns(), on_exit=lambda p: None)  # never started
    clock = _Clock()
    monkeypatch.setattr(pane_module, "time", clock)
    assert pane._output_slow(PANE_PACED_READ_BYTES // 4)
    assert not pane._output_slow(PANE_PACED_READ_BYTES)  # a flood in this stretch
    stretch = PANE_WATCHED_READ_PAUSE_S * 1.01
    clock.now += stretch
    assert not pane._output_slow(1)  # the stretch before was a flood: read on
    clock.now += stretch
    assert pane._output_slow(1)  # two slow stretches
    clock.now += 10 * PANE_WATCHED_READ_PAUSE_S
    assert pane._output_slow(PANE_PACED_READ_BYTES - 1)


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
