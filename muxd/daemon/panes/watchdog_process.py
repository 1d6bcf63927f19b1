"""The pane watchdog's own program: `python -I -S watchdog_process.py GRACE_S`, started by the
daemon (daemon/panes/watchdog.py), standard library only, so it imports nothing from wherever it runs.

It reads lines from stdin, `+SID` when a pane's program starts (the session it leads) and
`-SID` when that program has been reaped. When stdin ends, the daemon is gone, however it
went (kill-server, SIGTERM, `kill -9`): every process still in a guarded session is hung up
(SIGHUP + SIGCONT, as a closed terminal would), and what is left after GRACE_S is killed.
That reaches programs that ignore SIGHUP and their children in other process groups of the
session; a process that made a session of its own (setsid, daemons) is out of reach.
"""

from __future__ import annotations

import os
import signal
import sys
import time

POLL_S = 0.05
# Processes may fork while they are being killed: kill again until none is left, this often.
KILL_ROUNDS = 20


def session_members(sessions: set[int]) -> list[int]:
    """Pids of the live processes whose session is one of `sessions`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        # After the command: state, ppid, pgrp, session.
        if fields[0] not in (b"Z", b"X") and int(fields[3]) in sessions:
            found.append(int(entry))
    return found


def signal_all(pids: list[int], signals: tuple[signal.Signals, ...]) -> None:
    for pid in pids:
        for sig in signals:
            try:
                os.kill(pid, sig)
            except OSError:
                pass


def end_sessions(sessions: set[int], grace_s: float) -> None:
    """Hang up every process of `sessions`, then kill what is still there after `grace_s`."""
    signal_all(session_members(sessions), (signal.SIGHUP, signal.SIGCONT))
    deadline = time.monotonic() + grace_s
    while session_members(sessions) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    for _ in range(KILL_ROUNDS):
        left = session_members(sessions)
        if not left:
            return
        signal_all(left, (signal.SIGKILL,))
        time.sleep(POLL_S)


def read_sessions(stream) -> set[int]:  # type: ignore[no-untyped-def]
    """Follow the daemon's `+SID` / `-SID` lines until they end; return the sessions still guarded."""
    sessions: set[int] = set()
    for line in stream:
        try:
            sid = int(line[1:])
        except ValueError:
            continue
        if line.startswith(b"+"):
            sessions.add(sid)
        elif line.startswith(b"-"):
            sessions.discard(sid)
    return sessions


def main(argv: list[str]) -> int:
    grace_s = float(argv[1])
    sessions = read_sessions(sys.stdin.buffer)
    if sessions:
        end_sessions(sessions, grace_s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
