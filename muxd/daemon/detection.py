"""Agent detection for one live pane: when to look (throttled, off the output path) and what
to tell subscribers. The looking itself is `muxd.detectors.runner.DetectorRunner`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from muxd.detectors.base import Detector, ScreenContext
from muxd.detectors.runner import DetectionSchedule, DetectorRunner
from muxd.detectors.state import AgentState

if TYPE_CHECKING:
    from muxd.daemon.pane import Pane


def process_argv(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


class ForegroundProcess:
    """Name and argv of a pane's foreground process, read from /proc again only when the
    process group changes or PROCESS_RECHECK_S has passed (a program may exec another)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.name: str | None = None
        self.argv: list[str] = []
        self.read_at = float("-inf")

    def of(self, pane: Pane) -> ForegroundProcess:
        pid = pane.foreground_pid()
        now = time.monotonic()
        if pid != self.pid or now - self.read_at > PROCESS_RECHECK_S:
            self.pid, self.read_at = pid, now
            self.name = pane.foreground_name() if pid else None
            self.argv = process_argv(pid) if pid else []
        return self


PROCESS_RECHECK_S = 3.0


def screen_context(pane: Pane, foreground: ForegroundProcess | None = None) -> ScreenContext:
    """The frame a detector sees: visible text plus who is in the foreground."""
    emulator = pane.emulator
    process = (foreground or ForegroundProcess()).of(pane)
    return ScreenContext(
        lines=emulator.display_lines(),
        columns=emulator.columns,
        cursor=emulator.cursor,
        title=emulator.title,
        process_name=process.name,
        process_argv=process.argv,
        exited=pane.exited,
        exit_code=pane.exit_code,
        now=time.time(),
        alternate_screen=emulator.alternate_screen,
    )


class PaneDetection:
    """Schedules detection runs for `pane` on the loop and reports state changes."""

    def __init__(self, pane: Pane, detectors: Sequence[Detector],
                 on_change: Callable[[Pane, AgentState], None]) -> None:
        self.pane = pane
        self.runner = DetectorRunner(pane.id, detectors)
        self.schedule = DetectionSchedule()
        self.foreground = ForegroundProcess()
        self._on_change = on_change
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def state(self) -> AgentState:
        return self.runner.state

    def output(self) -> None:
        """Called after output reached the screen: never detects inline, only schedules."""
        if self._closed or self.schedule.due is not None:
            return  # a look is already on its way (most output lands while one is due)
        loop = asyncio.get_running_loop()
        self._arm(loop, self.schedule.output(loop.time()))

    def _arm(self, loop: asyncio.AbstractEventLoop, due: float | None) -> None:
        if due is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(due, self._run)

    def run_now(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._run()

    def _run(self) -> None:
        self._timer = None
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        before = self.runner.state
        now = loop.time()
        changed = self.runner.run(screen_context(self.pane, self.foreground))
        self.schedule.ran(now, changed=self.runner.significant(before, changed) or self.runner.pending)
        if changed is not None:
            self._on_change(self.pane, changed)
        if self.runner.pending:  # a state waits for its second look even if the screen is still
            self._arm(loop, self.schedule.again(loop.time()))

    def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
