"""A real Pane on a real PTY: its output waits for emulation turns, and backpressure holds the
program when too much waits; the exit is announced only once the last output is on screen."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable

import pytest

from muxd.config import (
    PANE_INPUT_PENDING_MAX_BYTES, PANE_PENDING_MAX_BYTES, PTY_READ_BUDGET_PER_WAKEUP_BYTES, SEND_KEYS_MAX_BYTES,
)
from muxd.daemon.panes.emulation import EmulationTurns
from muxd.daemon.panes.pane import Pane
from muxd.errors import Conflict
from muxd.testing.patience import patient_wait_for
from muxd.testing.server import process_alive
from muxd.testing.wait import WaitTimeout, async_wait_until

TEST_TIMEOUT_S = 30
LINE = "x" * 79 + "\n"
FLOOD_LINES = 4 * PANE_PENDING_MAX_BYTES // len(LINE)  # four backlogs' worth
# With turns held, reading without backpressure would take in all FLOOD_LINES within ms.
NO_GROWTH_WATCH_S = 1.0


class TurnGate:
    """`call_soon` for EmulationTurns that holds the turns until `open()`: the test decides
    when the daemon would get round to emulating."""

    def __init__(self) -> None:
        self.held: list[Callable[[], None]] = []
        self.is_open = False

    def call_soon(self, callback: Callable[[], None]) -> None:
        if self.is_open:
            asyncio.get_running_loop().call_soon(callback)
        else:
            self.held.append(callback)

    def open(self) -> None:
        self.is_open = True
        for callback in self.held:
            asyncio.get_running_loop().call_soon(callback)
        self.held.clear()


def make_pane(command: list[str], turns: EmulationTurns, on_exit: Callable[[Pane], None]) -> Pane:
    return Pane(1, command=command, cwd="/", env={"PATH": os.defpath, "TERM": "xterm-256color"},
                columns=80, lines=24, name=None, tags=[], remove_on_exit=False,
                scrollback_bytes=1 << 20, on_exit=on_exit, turns=turns)


async def _backpressure_then_drain() -> None:
    gate = TurnGate()
    turns = EmulationTurns(call_soon=gate.call_soon)
    screen_at_exit: list[str] = []
    program = [sys.executable, "-c",
               f"import sys\nfor _ in range({FLOOD_LINES}): sys.stdout.write({LINE!r})\nprint('FLOOD-DONE')"]
    pane = make_pane(program, turns, on_exit=lambda p: screen_at_exit.append("\n".join(p.emulator.display_lines())))
    pane.start(asyncio.get_running_loop())
    try:
        async def backlog_full() -> bool:
            return pane.unemulated_bytes >= PANE_PENDING_MAX_BYTES
        await async_wait_until(backlog_full, timeout=10, message="the backlog filling up")

        async def grew_or_finished() -> bool:
            return pane.unemulated_bytes > PANE_PENDING_MAX_BYTES + PTY_READ_BUDGET_PER_WAKEUP_BYTES \
                or pane.exited or bool(screen_at_exit)
        # Nothing is emulated while the turns are held: the pane stops reading and the program blocks.
        with pytest.raises(WaitTimeout):
            await async_wait_until(grew_or_finished, timeout=NO_GROWTH_WATCH_S)
        assert pane.pid is not None and process_alive(pane.pid)
        assert "FLOOD-DONE" not in "\n".join(pane.emulator.display_lines())

        gate.open()

        async def exited() -> bool:
            return pane.exited
        await async_wait_until(exited, timeout=20, message="the pane's exit, after all its output")
        assert pane.exit_code == 0
        assert pane.unemulated_bytes == 0
        assert len(screen_at_exit) == 1 and "FLOOD-DONE" in screen_at_exit[0], screen_at_exit
    finally:
        pane.close()


def test_a_pane_with_too_much_unemulated_output_stops_reading_until_it_drains() -> None:
    asyncio.run(patient_wait_for(_backpressure_then_drain(), TEST_TIMEOUT_S))


async def _exit_waits_for_output() -> None:
    gate = TurnGate()
    turns = EmulationTurns(call_soon=gate.call_soon)
    seen: list[str] = []
    pane = make_pane(["sh", "-c", "echo LAST-WORDS"], turns,
                     on_exit=lambda p: seen.append("\n".join(p.emulator.display_lines())))
    pane.start(asyncio.get_running_loop())
    try:
        async def output_read() -> bool:
            return pane.unemulated_bytes > 0 and pane.pid is not None and not process_alive(pane.pid)
        await async_wait_until(output_read, timeout=10, message="the output read and the program gone")
        # The program is gone, but its output waits for a turn: so does the exit.
        async def announced() -> bool:
            return bool(seen)
        with pytest.raises(WaitTimeout):
            await async_wait_until(announced, timeout=0.5)
        gate.open()
        await async_wait_until(announced, timeout=10, message="the exit announced")
        assert "LAST-WORDS" in seen[0] and pane.exited and pane.exit_code == 0
    finally:
        pane.close()


def test_the_exit_is_announced_after_the_last_output_reached_the_screen() -> None:
    asyncio.run(patient_wait_for(_exit_waits_for_output(), TEST_TIMEOUT_S))


async def _deaf_then_reading(fifo: str, caplog: pytest.LogCaptureFixture) -> None:
    pane = make_pane(["sh", "-c", f"stty raw -echo; echo DEAF; read _ < {fifo}; exec cat > /dev/null"],
                     EmulationTurns(), on_exit=lambda p: None)
    pane.start(asyncio.get_running_loop())
    try:
        async def deaf() -> bool:
            return "DEAF" in "\n".join(pane.emulator.display_lines())
        await async_wait_until(deaf, timeout=10, message="the program in raw mode, not reading")
        chunk = b"k" * SEND_KEYS_MAX_BYTES
        with caplog.at_level(logging.WARNING, logger="muxd.daemon.panes.pane"):
            for _ in range(2 * PANE_INPUT_PENDING_MAX_BYTES // len(chunk)):
                pane.write(chunk)  # what attached clients and the emulator's replies use: never raises
        assert pane.waiting_input_bytes <= PANE_INPUT_PENDING_MAX_BYTES
        dropped = [r for r in caplog.records if "not reading its input" in r.getMessage()]
        assert len(dropped) == 1, [r.getMessage() for r in caplog.records]
        with pytest.raises(Conflict, match="is not reading its input"):
            pane.send(chunk)

        with open(fifo, "w") as gate:  # now the program reads everything
            gate.write("go\n")

        async def drained() -> bool:
            return pane.waiting_input_bytes == 0
        await async_wait_until(drained, timeout=10, message="the waiting input taken by the program")
        pane.send(chunk)  # accepted again
    finally:
        pane.close()


def test_input_a_program_does_not_read_is_capped_and_flows_again_once_it_reads(tmp_path, caplog) -> None:
    fifo = str(tmp_path / "gate")
    os.mkfifo(fifo)
    asyncio.run(patient_wait_for(_deaf_then_reading(fifo, caplog), TEST_TIMEOUT_S))


def test_a_new_pane_answers_its_size_and_title_before_its_screen_is_built() -> None:
    """A pane's emulator is built at its first use (the program's first output, most often), so a
    new pane's reply, which reads its size and title, waits for no emulator (nor, at a cold
    start's first pane, for the emulator backend's import); once built, the screen has that size."""
    from muxd.daemon.panes.registry import Session, Window, pane_info

    pane = make_pane(["true"], EmulationTurns(), lambda _: None)
    session = Session(0, "s")
    window = Window(0, session, 0, "w")
    session.add(window)
    window.add(pane)
    info = pane_info(pane)
    assert (info.width, info.height, info.title, info.emulator_failed) == (80, 24, "", False)
    assert pane._emulator is None
    pane.set_title("named")
    assert pane.title == "named"
    assert (pane.emulator.columns, pane.emulator.lines) == (80, 24)
    assert pane.title == "named" and pane._emulator is not None


def test_a_detector_sees_the_end_of_the_last_input_typed_not_the_emulators_replies() -> None:
    """Enter and Ctrl-C can leave the same frame; the detectors tell them by the last key typed."""
    from muxd.daemon.panes.detection import screen_context
    from muxd.daemon.panes.pane import LAST_INPUT_KEPT_BYTES

    pane = make_pane(["true"], EmulationTurns(), lambda _: None)
    assert screen_context(pane).last_input == b""
    pane.write(b"please answer\r")
    assert screen_context(pane).last_input.endswith(b"answer\r")
    pane.write(b"\x03")
    assert screen_context(pane).last_input == b"\x03"
    pane.write(b"x" * 100)
    assert screen_context(pane).last_input == b"x" * LAST_INPUT_KEPT_BYTES
