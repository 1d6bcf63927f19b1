"""A pane whose emulator fails: the screen freezes, the PTY is still drained, the bytes still
reach the taps, the failure is logged once and reported, and the daemon's other panes go on.

The failure is a fault injected inside a real `Emulator`'s feed (where a backend bug would
raise), on real panes with real PTYs sharing one set of emulation turns."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

import msgspec
import pytest

from muxd.cli.render import pane_status
from muxd.config import PANE_PENDING_MAX_BYTES
from muxd.daemon.panes.emulation import EmulationTurns
from muxd.daemon.panes.pane import Pane
from muxd.daemon.panes.registry import Session, Window, pane_info
from muxd.emulator import Emulator
from muxd.testing.patience import patient_wait_for
from muxd.testing.wait import async_wait_until

TEST_TIMEOUT_S = 30
FAULT_MARK = "BOOM"
# Far more than a pane holds unemulated: had the failed pane stopped reading, the program would block.
FLOOD_BYTES = 4 * PANE_PENDING_MAX_BYTES
FAILING_PROGRAM = ("import sys\nprint('BEFORE', flush=True)\nsys.stdin.readline()\n"
                   f"print({FAULT_MARK!r}, flush=True)\n"
                   f"sys.stdout.write(('y' * 79 + '\\n') * {FLOOD_BYTES // 80})\nprint('DONE-A', flush=True)\n")
ECHO_PROGRAM = "import sys\nprint('B-READY', flush=True)\nprint('B-GOT', sys.stdin.readline().strip(), flush=True)\n" \
               "sys.stdin.readline()\n"


class FaultyEmulator(Emulator):
    """A real emulator that raises inside its own feed on output holding FAULT_MARK."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        emulate = self._feed_text

        def feed_text(text: str) -> None:
            if FAULT_MARK in text:
                raise RuntimeError("injected emulator fault")
            emulate(text)

        self._feed_text = feed_text


def new_pane(number: int, program: str, turns: EmulationTurns, exited: list[Pane]) -> Pane:
    return Pane(number, command=[sys.executable, "-c", program], cwd="/",
                env={"PATH": os.defpath, "TERM": "xterm-256color"}, columns=80, lines=24, name=None, tags=[],
                remove_on_exit=False, scrollback_bytes=1 << 20, on_exit=exited.append, turns=turns)


def screen(pane: Pane) -> str:
    return "\n".join(pane.emulator.display_lines())


async def _failing_pane_beside_a_working_one(caplog: pytest.LogCaptureFixture) -> None:
    turns = EmulationTurns()
    exited: list[Pane] = []
    failing, working = new_pane(1, FAILING_PROGRAM, turns, exited), new_pane(2, ECHO_PROGRAM, turns, exited)
    failing.emulator = FaultyEmulator(80, 24, reply=failing.write)
    tapped: list[bytes] = []
    failing.output_taps.append(tapped.append)
    session = Session(0, "s")
    window = Window(0, session, 0, "w")
    session.add(window)
    window.add(failing)
    loop = asyncio.get_running_loop()
    failing.start(loop)
    working.start(loop)
    try:
        async def shown(pane: Pane, text: str) -> bool:
            return text in screen(pane)
        await async_wait_until(lambda: shown(failing, "BEFORE"), timeout=10, message="the first output")
        await async_wait_until(lambda: shown(working, "B-READY"), timeout=10, message="the other pane's output")
        assert not failing.emulator_failed and not pane_info(failing).emulator_failed

        with caplog.at_level(logging.ERROR):
            failing.write(b"go\n")  # the program now prints the fault mark and floods

            async def failing_exited() -> bool:
                return failing in exited
            await async_wait_until(failing_exited, timeout=20, message="the failed pane's program done and reaped")

        # The program was never blocked, every byte reached the taps, none waits to be emulated.
        assert failing.exit_code == 0
        assert b"DONE-A" in b"".join(tapped) and len(b"".join(tapped)) > FLOOD_BYTES
        assert failing.unemulated_bytes == 0
        # The screen (and capture-pane) froze as it was before the fault.
        frozen = screen(failing)
        assert "BEFORE" in frozen and FAULT_MARK not in frozen and "DONE-A" not in frozen
        assert "BEFORE" in failing.emulator.capture()
        assert failing.emulator_failed and failing.emulator.failed
        info = pane_info(failing)
        assert info.emulator_failed and pane_status(info) == "exited (0), screen frozen"
        assert b'"emulator_failed":true' in msgspec.json.encode(info)
        # Logged once by the pane, naming it and the backend, without the output.
        said = [r.getMessage() for r in caplog.records if r.name == "muxd.daemon.panes.pane"]
        assert len(said) == 1 and "%1" in said[0] and "FaultyEmulator" in said[0], said
        assert "DONE-A" not in caplog.text and "yyyy" not in caplog.text

        # The other pane is still fed.
        working.write(b"hello\n")
        await async_wait_until(lambda: shown(working, "B-GOT hello"), timeout=10, message="the other pane fed on")
        assert not working.emulator_failed
    finally:
        failing.close()
        working.close()


def test_a_failed_emulator_freezes_its_pane_only_and_the_pty_is_still_drained(caplog) -> None:
    asyncio.run(patient_wait_for(_failing_pane_beside_a_working_one(caplog), TEST_TIMEOUT_S))
