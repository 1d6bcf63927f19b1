"""Agent detection for one live pane: when to look (throttled, off the output path) and what
to tell subscribers. The looking itself is `muxd.detectors.runner.DetectorRunner`, imported
and built at a pane's first look: a cold start's first reply waits for none of the detectors."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from muxd.daemon.panes import pty as ptys
from muxd.detectors.schedule import DetectionSchedule
from muxd.detectors.shell_names import SHELLS
from muxd.detectors.state import AgentState

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.detectors.base import Detector, ScreenContext
    from muxd.detectors.runner import DetectorRunner


class ForegroundProcess:
    """Name and argv of the program in a pane's foreground: the leader of the terminal's
    foreground process group or, when that leader is a shell running a command without job
    control (`sh -c "agent; exec bash"`), that command (the shell's child in its group).

    Read from /proc again only when it may have changed: the process group changed, or the
    leader's executable did (a program may exec another; one readlink every PROCESS_RECHECK_S
    tells), or PROCESS_REREAD_S passed (an exec of the same executable with other arguments).
    Reading comm and cmdline every few seconds cost a busy daemon more per look than the
    runner's bookkeeping. While a shell leads, the check is made on every look: its child comes
    and goes without the group changing, and a shell in front means no agent is reported, so a
    stale answer would hide an agent that started (a shell at its prompt writes little)."""

    def __init__(self) -> None:
        self.leader: int | None = None  # the foreground process group (its leader's pid)
        self.pid: int | None = None     # the process reported: the leader or its child
        self.name: str | None = None
        self.argv: list[str] = []
        self.exe: str | None = None     # the leader's executable
        self.shell_leads = False
        self.command_exe: str | None = None  # the reported process's executable, while a shell leads
        self.read_at = self.checked_at = float("-inf")

    def of(self, pane: Pane) -> ForegroundProcess:
        leader = pane.foreground_pid()
        now = time.monotonic()
        if leader != self.leader or now - self.read_at > PROCESS_REREAD_S:
            self._read(leader, now)
        elif leader and (self.shell_leads or now - self.checked_at > PROCESS_RECHECK_S):
            self.checked_at = now
            # No argv yet: caught in the middle of an exec (the new image has no arguments
            # mapped yet), so read again.
            if not self.argv or ptys.process_exe(leader) != self.exe or self.shell_leads and (
                    self._command_of(leader) != self.pid or ptys.process_exe(self.pid) != self.command_exe):
                # (a shell's child first runs the shell's own image, until it execs the command)
                self._read(leader, now)
        return self

    def _read(self, leader: int | None, now: float) -> None:
        self.leader, self.read_at, self.checked_at = leader, now, now
        # The executable first: if the process execs while we read, the next check sees a
        # different one and reads again (the other order could keep a stale name for long).
        self.exe = ptys.process_exe(leader) if leader else None
        name = ptys.process_name(leader) if leader else None
        self.shell_leads = name in SHELLS
        pid = self._command_of(leader) if leader and self.shell_leads else leader
        self.pid = pid
        self.command_exe = ptys.process_exe(pid) if self.shell_leads and pid else None
        self.name = name if pid == leader else (ptys.process_name(pid) if pid else None)
        self.argv = ptys.process_argv(pid) if pid else []

    @staticmethod
    def _command_of(leader: int | None) -> int | None:
        """The process a shell leading the group runs in that group (a shell's own child may
        be a shell again: `sh -c "bash -c agent"`), or the leader itself."""
        pid = leader
        for _ in range(SHELL_NESTING_MAX):
            child = ptys.group_child(pid) if pid else None
            if child is None:
                break
            pid = child
            if ptys.process_name(pid) not in SHELLS:
                break
        return pid


PROCESS_RECHECK_S = 3.0
PROCESS_REREAD_S = 30.0
# Shells inside shells followed down to the command they run.
SHELL_NESTING_MAX = 4


def shell_in_front(pane: Pane) -> str | None:
    """The shell that would read what is typed into `pane` now, if a shell and not an agent is
    in front (it would run a prompt as a command); None for an agent or any other program.
    Judged by the foreground process, read afresh (no wait for detection); where none is known,
    by the detectors' word ("a shell")."""
    running = ForegroundProcess().of(pane).name
    if running is not None:
        return running if running in SHELLS else None
    return "a shell" if pane.agent.agent_type == "shell" else None


def screen_context(pane: Pane, foreground: ForegroundProcess | None = None) -> ScreenContext:
    """The frame a detector sees: visible text plus who is in the foreground."""
    from muxd.detectors.base import ScreenContext

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
        last_input=pane.last_input,
        input_at=pane.last_input_at,
    )


class PaneDetection:
    """Schedules detection runs for `pane` on the loop and reports state changes."""

    def __init__(self, pane: Pane, detectors: Sequence[Detector],
                 on_change: Callable[[Pane, AgentState], None]) -> None:
        self.pane = pane
        self._detectors = detectors
        self.schedule = DetectionSchedule()
        self.foreground = ForegroundProcess()
        self._on_change = on_change
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self._recheck: asyncio.TimerHandle | None = None  # see _arm_recheck

    @functools.cached_property
    def runner(self) -> DetectorRunner:
        """The pane's detector runner, built at its first look (or the first question asked of it)."""
        from muxd.detectors.runner import DetectorRunner

        return DetectorRunner(self.pane.id, self._detectors)

    @property
    def state(self) -> AgentState:
        return self.runner.state

    @property
    def settled(self) -> bool:
        """No look at the screen is on its way, the last look read the newest frame (none skipped
        as ticking only) and its state is published (none waits for its second look, or for a
        prompt's uptake)."""
        return self.schedule.due is None and not self.runner.pending and self.runner.unread_until is None

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
        self.schedule.ran(now, changed=self.runner.significant(before, changed) or self.runner.pending,
                          cost_s=self.runner.last_cost_s)
        self._publish(changed)
        if self.runner.pending:  # a state waits for its second look even if the screen is still
            self._arm(loop, self.schedule.again(loop.time()))
        elif self.runner.unread_until is not None:  # a frame skipped as ticking: read it then, still or not
            self._arm(loop, loop.time() + max(0.0, self.runner.unread_until - self.runner.clock()))

    def hook(self, agent: str, payload: dict[str, Any], received_at: float) -> None:
        """The pane's agent reported an event through its hooks (muxd hook): fused with the
        screen at once, as a change on screen is."""
        if self._closed:
            return
        from muxd.detectors.hook_events import hook_fact

        self._publish(self.runner.hook(hook_fact(agent, payload, received_at)))

    def interrupted(self) -> None:
        """muxd sent the pane's agent its interrupt key (a cancelled execution): the turn its
        hooks opened ends once the screen shows the agent at rest."""
        if not self._closed:
            self._publish(self.runner.interrupted())

    def _publish(self, changed: AgentState | None) -> None:
        if changed is not None:
            self._on_change(self.pane, changed)
        self._arm_recheck()

    def _arm_recheck(self) -> None:
        """The fused state may change with time alone (an open turn's hold ending against a
        screen at rest): look again then, whatever the screen does."""
        if self._recheck is not None:
            self._recheck.cancel()
            self._recheck = None
        due = self.runner.recheck_at
        if due is not None and not self._closed:
            delay = max(0.0, due - self.runner.clock())
            self._recheck = asyncio.get_running_loop().call_later(delay, self._refresh)

    def _refresh(self) -> None:
        self._recheck = None
        if not self._closed:
            self._publish(self.runner.refresh())

    def close(self) -> None:
        self._closed = True
        for timer in (self._timer, self._recheck):
            if timer is not None:
                timer.cancel()
        self._timer = self._recheck = None
