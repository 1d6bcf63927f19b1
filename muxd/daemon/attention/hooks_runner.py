"""Hooks on events: each event of the bus runs the commands `set-hook` gave its kind, as tmux
runs its hooks.

Which hook: the most specific level that has it set, and only that one (tmux's
notify_insert_hook): for a window hook (pane-died, agent-waiting…) the event's pane, else its
window, else the global one; for a session hook (session-created, alert-bell…) the event's
session, else the global one (daemon/panes/hook_arrays.py). Its commands are looked up when the
event happens (a pane that closes takes its own hooks with it), and run later, in order: each
item of the hook's array, each command of an item in turn, the rest of an item skipped once
one fails (tmux's command queue).

How: a command is a muxd command line, run as the config file's and the command prompt's are,
in a `muxd` process acting as the server's owner (daemon/core/cli_lines.py), with the event's
pane (else its window, else its session, while they last) as its default `-t`, in that pane's
directory. The event's variables (#{hook}, #{hook_pane}, #{hook_question}…) reach its formats
through the environment (daemon/panes/format_variables.py); the target pane's own variables
come as every command's do. What the commands print, and why one failed, go to the server log.

A hook's own commands run no hooks, as tmux's (CMDQ_STATE_NOHOOKS): the events a request of
theirs causes while it is handled are heard by everyone else but not here; what such a request
leaves behind (a pane it made exits later) is an event like any other.

Never on the event's way: `take` only looks the hook up and queues it. At most HOOK_RUNS_MAX
hooks run at once and HOOK_RUNS_WAITING_MAX wait; a storm beyond that is dropped (and logged),
and each command (with what it left in the background) is killed after HOOK_COMMAND_TIMEOUT_S.
A hook that fails is logged and forgotten: the daemon goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from muxd._environ import HOOK_VARIABLES_ENV
from muxd.config import (
    HOOK_COMMAND_TIMEOUT_S, HOOK_DROPS_LOG_INTERVAL_S, HOOK_RUNS_MAX, HOOK_RUNS_WAITING_MAX,
)
from muxd.daemon.panes.hook_arrays import HOOK_SCOPES, HookArrays
from muxd.paths import CLIENT_NAME_ENV
from muxd.protocol.event_messages import DaemonEvent
from muxd.sampled_log import SampledLog

if TYPE_CHECKING:
    from muxd.daemon.panes.registry import Registry

log = logging.getLogger(__name__)

HOOK_OUTPUT_LOG_LINES_MAX = 20  # of one command's output, the lines the server log gets
HOOK_CLIENT_NAME = "muxd-hook"  # how a hook's command greets the daemon ($MUXD_CLIENT_NAME)


class _Handling:
    """A request of a hook's command, while the daemon handles it."""

    def __init__(self) -> None:
        self.going = True


# Set while a hook's command's request is handled. Callbacks it schedules (a pane's reader)
# copy the context: the flag going false after it keeps their later events hookable.
_handling: ContextVar[_Handling | None] = ContextVar("muxd_hook_request", default=None)


@contextmanager
def handling_hook_request() -> Iterator[None]:
    """Around the handling of a request sent by a hook's command: its events run no hooks."""
    handling = _Handling()
    token = _handling.set(handling)
    try:
        yield
    finally:
        handling.going = False
        _handling.reset(token)

# Where an event's hook commands run: (default target, working directory), looked up as each
# command starts (the event's pane may be gone by then).
Locate = Callable[[DaemonEvent], tuple[str | None, str | None]]


def hook_variables(event: DaemonEvent) -> dict[str, str]:
    """The formats tmux gives a hook's commands (#{hook}, #{hook_pane}, #{hook_session_name}…) and
    muxd's for its own events (#{hook_agent}, #{hook_question}…), from what `event` says."""
    resets_at = int(event.resets_at) if event.resets_at is not None else None
    values = {
        "hook": event.kind, "hook_pane": event.pane_id, "hook_window": event.window_id,
        "hook_window_name": event.window_name, "hook_session": event.session_id,
        "hook_session_name": event.session, "hook_client": event.client,
        "hook_agent": event.agent_type, "hook_state": event.state, "hook_previous": event.previous,
        "hook_question": event.question, "hook_error": event.error, "hook_execution": event.execution_id,
        "hook_status": event.status, "hook_resets_at": resets_at, "hook_exit_code": event.exit_code,
    }
    return {name: str(value) for name, value in values.items() if value is not None}


class _Run(msgspec.Struct, frozen=True):
    event: DaemonEvent
    lines: list[str]              # the hook's command lines, in index order
    variables: dict[str, str]


class HookRunner:
    def __init__(self, hooks: HookArrays, socket_path: Path, locate: Locate) -> None:
        self.hooks = hooks
        self.socket_path = socket_path
        self.locate = locate
        self._waiting: deque[_Run] = deque()
        self._running: set[asyncio.Task[None]] = set()
        self._closed = False
        self._drops = SampledLog(log, logging.WARNING, "hook run dropped, too many events at once",
                                 interval_s=HOOK_DROPS_LOG_INTERVAL_S)

    def take(self, event: DaemonEvent) -> None:
        """A bus listener: queue the hook of `event`'s kind, if one is set for it."""
        self.run(event, hook_variables(event))

    def run(self, event: DaemonEvent, variables: dict[str, str]) -> None:
        """Queue the hook named `event.kind` for where `event` happened (set-hook -R calls this
        with only #{hook} among the variables, as tmux's)."""
        caused_by_hook = _handling.get()
        if self._closed or event.kind not in HOOK_SCOPES or (caused_by_hook is not None and caused_by_hook.going):
            return
        lines = self.hooks.commands(event.kind, self._owners(event))
        if not lines:
            return
        run = _Run(event, lines, variables)
        if len(self._running) < HOOK_RUNS_MAX:
            self._start(run)
        elif len(self._waiting) < HOOK_RUNS_WAITING_MAX:
            self._waiting.append(run)
        else:
            self._drops.event(f": {event.kind}")

    @staticmethod
    def _owners(event: DaemonEvent) -> list[str | None]:
        """The levels that may set the hook, nearest first (the global one comes last, always)."""
        if HOOK_SCOPES[event.kind] == "session":
            return [event.session_id]
        return [event.pane_id, event.window_id]

    def _start(self, run: _Run) -> None:
        task = asyncio.get_running_loop().create_task(self._run(run))
        self._running.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        if self._waiting and not self._closed:
            self._start(self._waiting.popleft())

    async def _run(self, run: _Run) -> None:
        kind = run.event.kind
        env = {HOOK_VARIABLES_ENV: json.dumps(run.variables), CLIENT_NAME_ENV: HOOK_CLIENT_NAME}
        # At the first hook run, not before the daemon's first reply (it imports argparse).
        from muxd.daemon.core.cli_lines import line_commands

        try:
            for line in run.lines:
                for words in line_commands(line):
                    if not await self._command(kind, words, run.event, env):
                        break  # the rest of this item, as tmux's queue skips a failed command's group
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("hook %s failed", kind)

    async def _command(self, kind: str, words: list[str], event: DaemonEvent, env: dict[str, str]) -> bool:
        from muxd.daemon.core.cli_lines import run_cli, with_default_target

        target, cwd = self.locate(event)
        done = await run_cli(self.socket_path, with_default_target(words, target), cwd=cwd,
                             timeout_s=HOOK_COMMAND_TIMEOUT_S, env=env)
        output = (done.out + done.err).splitlines()
        for line in output[:HOOK_OUTPUT_LOG_LINES_MAX]:
            log.info("hook %s: %s: %s", kind, words[0], line)
        if len(output) > HOOK_OUTPUT_LOG_LINES_MAX:
            log.info("hook %s: %s: (%d more lines)", kind, words[0], len(output) - HOOK_OUTPUT_LOG_LINES_MAX)
        if done.returncode == 0:
            return True
        reason = f"still running after {HOOK_COMMAND_TIMEOUT_S:g}s, killed" if done.returncode is None \
            else done.error_line()
        log.warning("hook %s: %s failed: %s", kind, words[0], reason)
        return False

    async def close(self) -> None:
        """No more hooks: those waiting are dropped, those running stopped (their processes killed)."""
        self._closed = True
        self._waiting.clear()
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        self._drops.flush()


def registry_locator(registry: Registry) -> Locate:
    """`Locate` over the daemon's registry: the event's pane while it lasts, else its window, else
    its session; the pane's directory, else the home directory."""
    home = os.path.expanduser("~")

    def locate(event: DaemonEvent) -> tuple[str | None, str | None]:
        pane = registry.pane_by_id(event.pane_id) if event.pane_id else None
        if pane is not None:
            return pane.id, pane.cwd() or home
        windows = {w.id for s in registry.sessions for w in s.windows}
        if event.window_id in windows:
            return event.window_id, home
        if event.session_id in {s.id for s in registry.sessions}:
            return event.session_id, home
        return None, home

    return locate
