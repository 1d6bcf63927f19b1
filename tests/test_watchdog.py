"""When the daemon goes, however it goes, the programs of its panes go too: also those that
ignore SIGHUP and their children in other process groups of the pane's session."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.config import PANE_HANGUP_GRACE_S
from muxd.daemon.panes import watchdog_process
from muxd.daemon.panes.watchdog import PaneWatchdog
from muxd.testing.server import MuxdTestServer, process_alive
from muxd.testing.wait import wait_until

# The hang-up grace, then the watchdog's kill: well within this.
GONE_TIMEOUT_S = PANE_HANGUP_GRACE_S + 8.0

# Ignores SIGHUP and forks a child (ignoring it too) into a process group of its own.
STUBBORN = """
import os, signal, time
signal.signal(signal.SIGHUP, signal.SIG_IGN)
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    time.sleep(600)
    os._exit(0)
os.setpgid(child, child)  # the parent too, as shells do: the group is set before the pids are printed
print(f"PIDS {os.getpid()} {child}", flush=True)
time.sleep(600)
"""


def stubborn_pane(server, session: str) -> list[int]:
    server.cli("new-session", "-d", "-s", session, "--", sys.executable, "-c", STUBBORN, check=True)
    screen = server.wait_for_text(session, "PIDS")
    pids = [int(p) for p in re.search(r"PIDS (\d+) (\d+)", screen).groups()]
    assert all(process_alive(pid) for pid in pids)
    assert os.getpgid(pids[1]) != os.getpgid(pids[0]) and os.getsid(pids[1]) == os.getsid(pids[0])
    return pids


def watchdog_pid(server) -> int:
    found = re.findall(r"pane watchdog started \(pid (\d+)\)", Path(server.log_path).read_text())
    assert found, "no watchdog in the daemon's log"
    return int(found[-1])


def wait_all_gone(pids: list[int], what: str) -> None:
    try:
        wait_until(lambda: not any(process_alive(pid) for pid in pids), timeout=GONE_TIMEOUT_S, message=what)
    finally:
        for pid in pids:  # leave no orphan behind, whatever the outcome
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def end_daemon(server, how: str) -> None:
    if how == "kill -9":
        os.kill(server.pid, signal.SIGKILL)
    elif how == "SIGTERM":
        os.kill(server.pid, signal.SIGTERM)
    else:
        server.cli("kill-server", check=True)
    wait_until(lambda: not server.running(), timeout=10, message="the daemon's end")


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM", "kill-server"])
def test_programs_that_ignore_sighup_go_with_the_daemon(muxd_server, how):
    s = muxd_server
    pids = stubborn_pane(s, "a") + stubborn_pane(s, "b")
    guard = watchdog_pid(s)
    end_daemon(s, how)
    wait_all_gone(pids + [guard], f"the panes' programs and the watchdog gone after {how}")


def test_a_watchdog_that_died_is_replaced_and_guards_every_pane(muxd_server):
    s = muxd_server
    first = stubborn_pane(s, "a")
    old = watchdog_pid(s)
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: not process_alive(old), message="the first watchdog's end")
    second = stubborn_pane(s, "b")  # telling the dead watchdog fails: another is started
    assert watchdog_pid(s) != old
    os.kill(s.pid, signal.SIGKILL)
    wait_all_gone(first + second + [watchdog_pid(s)], "both panes' programs gone with the daemon")


def test_the_watchdog_guards_the_sessions_started_and_not_yet_reaped():
    lines = [b"+10\n", b"+11\n", b"-10\n", b"+12\n", b"garbage\n", b"-99\n"]
    assert watchdog_process.read_sessions(iter(lines)) == {11, 12}


def test_a_cold_starts_first_pane_is_guarded_by_the_watchdog_started_after_its_reply(muxd_unstarted: MuxdTestServer):
    s = muxd_unstarted
    pids = stubborn_pane(s, "a")  # new-session finds no server: it starts one, whose first request it is
    s.pid = int((s.socket_dir / f"{s.name}.lock").read_text().strip())
    log = Path(s.log_path).read_text()
    # The watchdog's process start is off the cold start's critical path: after the first reply.
    assert log.index("pane %0 started") < log.index("pane watchdog started"), log
    guard = watchdog_pid(s)
    end_daemon(s, "kill -9")
    wait_all_gone(pids + [guard], "the first pane's programs and the watchdog gone after kill -9")


def test_sessions_guarded_before_the_watchdog_starts_are_told_to_it_as_it_starts():
    program = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, start_new_session=True)
    watchdog = PaneWatchdog(grace_s=0.1)
    assert program.stdout is not None
    pids = [int(p) for p in program.stdout.readline().split()[1:]]
    watchdog.guard(program.pid)
    assert watchdog.pid is None and watchdog.guarding
    watchdog.start()
    assert watchdog.pid is not None
    watchdog.close()  # as the daemon's end closes the pipe: the guarded session is ended
    wait_all_gone(pids + [watchdog.pid], "the session guarded before the watchdog started, gone when its pipe closed")
    program.wait(timeout=GONE_TIMEOUT_S)
