"""Starting a pane's program (daemon/panes/pty.py): through util-linux's setsid where it is
installed, else with a preexec_fn, the program leads a session of its own, its pane's terminal
is its controlling terminal, and it runs with the argv and directory it was given."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from muxd.daemon.panes import pty as ptys
from muxd.testing.wait import wait_until

# Prints what the program sees of itself: its session, its controlling terminal, argv and cwd.
# (tcgetpgrp answers only for the caller's controlling terminal: here its stdin, the pane's.)
REPORT = ("import os, sys; "
          "print('REPORT', os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid(), "
          "os.tcgetpgrp(0) == os.getpid(), os.ttyname(0), sys.argv[1:], os.getcwd(), 'END', flush=True)")


def _report(tmp_path: Path) -> tuple[ptys.PtyProcess, str]:
    process = ptys.spawn([sys.executable, "-c", REPORT, "a b", "-c"], env=dict(os.environ), cwd=str(tmp_path),
                         columns=80, lines=24)
    seen = bytearray()

    def read() -> bool:
        try:
            seen.extend(os.read(process.master_fd, 4096))
        except BlockingIOError:
            pass
        return b"END" in seen

    try:
        wait_until(read, timeout=20, message="the program's report")
        process.popen.wait(timeout=20)
    finally:
        os.close(process.master_fd)
    return process, seen.decode()


def test_a_pane_program_leads_its_session_on_its_pane_terminal(tmp_path: Path) -> None:
    assert ptys._setsid() is not None, "this machine has util-linux's setsid"
    process, report = _report(tmp_path)
    assert f"REPORT True True True {process.tty} ['a b', '-c'] {tmp_path} END" in report, report


def test_without_setsid_the_program_starts_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ptys, "_setsid", lambda: None)
    process, report = _report(tmp_path)
    assert f"REPORT True True True {process.tty} ['a b', '-c'] {tmp_path} END" in report, report
