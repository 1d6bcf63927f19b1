"""The pane watchdog: a tiny process that ends the panes' programs when the daemon goes.

Each pane's program leads a session of its own. A daemon killed with `kill -9` (or crashed)
closes its PTYs, and a program that ignores SIGHUP, or a child of it in another process
group, lives on as an orphan nobody knows; kill-server and SIGTERM hang the programs up but
the SIGKILL that should follow is scheduled on a loop that is stopping. So the daemon starts a
watchdog (watchdog_process.py: `python -I -S`, cwd `/`, in a session of its own) and tells it
over a pipe which sessions to guard; when the pipe ends, however the daemon ended, the
watchdog hangs up and then kills what is left of them.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from muxd.config import PANE_HANGUP_GRACE_S

log = logging.getLogger(__name__)

WATCHDOG_PROGRAM = Path(__file__).with_name("watchdog_process.py")


class PaneWatchdog:
    """`start()` it once the daemon owns its name (sessions guarded before are told to it
    then: the daemon starts it after its first reply); `guard(pid)` each pane's program as it
    starts and `release(pid)` once it is reaped; `close()` as the daemon ends (the watchdog
    then ends the sessions still guarded, after `grace_s`, on its own)."""

    def __init__(self, grace_s: float = PANE_HANGUP_GRACE_S) -> None:
        self.grace_s = grace_s
        self._process: subprocess.Popen[bytes] | None = None
        self._sessions: set[int] = set()
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def guarding(self) -> bool:
        """Whether a session is guarded (told to the watchdog when it starts, if it has not)."""
        return bool(self._sessions)

    def start(self) -> None:
        """Start the watchdog process (again, if one died) and tell it every guarded session."""
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(WATCHDOG_PROGRAM), str(self.grace_s)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd="/",
            start_new_session=True, close_fds=True,
        )
        assert self._process.stdin is not None
        os.set_blocking(self._process.stdin.fileno(), False)  # never block the loop on it
        if self._sessions:
            self._write("".join(f"+{sid}\n" for sid in self._sessions))
        log.info("pane watchdog started (pid %d)", self._process.pid)

    def guard(self, sid: int) -> None:
        self._sessions.add(sid)
        self._tell(f"+{sid}\n")

    def release(self, sid: int) -> None:
        if sid in self._sessions:
            self._sessions.discard(sid)
            self._tell(f"-{sid}\n")

    def close(self) -> None:
        """End the pipe: the watchdog hangs up and kills the sessions still guarded."""
        self._closed = True
        if self._process is not None and self._process.stdin is not None:
            try:
                self._process.stdin.close()
            except OSError:
                pass

    def _tell(self, line: str) -> None:
        if self._process is None or self._closed:
            return
        if not self._write(line):
            log.warning("pane watchdog %d is gone (status %s); starting another",
                        self._process.pid, self._process.poll())
            self.start()

    def _write(self, text: str) -> bool:
        """False if the watchdog is gone; a full pipe (a stopped watchdog) only loses the line."""
        assert self._process is not None and self._process.stdin is not None
        try:
            os.write(self._process.stdin.fileno(), text.encode())
        except BlockingIOError:
            log.warning("pane watchdog %d does not keep up; lost %r", self._process.pid, text.strip())
        except (BrokenPipeError, ValueError):
            return False
        return True
