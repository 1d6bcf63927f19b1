"""A real daemon whose emulator fails on one pane: that pane is reported and frozen, its program
is never blocked, and the daemon serves its other panes. The fault is injected into the
daemon process itself (a sitecustomize on its PYTHONPATH makes the pyte emulator raise inside
feed on output holding the mark), so nothing in muxd carries a test hook."""

from __future__ import annotations

import json
import os
from pathlib import Path

from muxd.testing.proc import tracebacks_in
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

FAULT_MARK = "BOOM"
FLOOD_BYTES = 4 * 1024 * 1024  # far more than a pane holds unemulated: a blocked program stops here
_RAISE_ON_MARK = f"""
from muxd.emulator.emulator import Emulator

_init = Emulator.__init__


def __init__(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    emulate = self._feed_text

    def feed_text(text):
        if {FAULT_MARK!r} in text:
            raise RuntimeError("injected emulator fault")
        emulate(text)

    self._feed_text = feed_text


Emulator.__init__ = __init__
"""


def test_a_pane_whose_emulator_failed_is_reported_frozen_and_drained_and_the_rest_goes_on(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(_RAISE_ON_MARK)
    drained = tmp_path / "drained"
    pythonpath = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    s = MuxdTestServer(env={"PYTHONPATH": pythonpath, "MUXD_EMULATOR": "pyte"}).start()
    try:
        failing = (f"echo BEFORE; read _; echo {FAULT_MARK}; head -c {FLOOD_BYTES} /dev/zero | tr '\\0' y; "
                   f"echo; echo DONE; touch {drained}; exec sleep 600")
        s.cli("new-session", "-d", "-s", "f", "--", "sh", "-c", failing, check=True)
        echo = "echo B-READY; read x; echo B-GOT $x; exec sleep 600"
        other = s.cli("new-window", "-t", "f", "-P", "--", "sh", "-c", echo, check=True).stdout.strip()
        s.wait_for_text("%0", "BEFORE")
        s.wait_for_text(other, "B-READY")
        s.cli("send-keys", "-t", "%0", "go", "Enter", check=True)

        wait_until(drained.exists, timeout=30, message="the failed pane's program past its flood")
        panes = {p["id"]: p for p in json.loads(s.cli("list-panes", "-a", "--json", check=True).stdout)}
        assert (panes["%0"]["status"], panes["%0"]["emulator_failed"]) == ("running", True)
        assert panes[other]["emulator_failed"] is False
        assert "running, screen frozen" in s.cli("ls", check=True).stdout
        frozen = s.capture("%0")
        assert "BEFORE" in frozen and FAULT_MARK not in frozen and "DONE" not in frozen

        s.cli("send-keys", "-t", other, "hello", "Enter", check=True)
        s.wait_for_text(other, "B-GOT hello")
        log = s.log_path.read_text()
        # The emulator's traceback once, the pane's line once: later output never reached it.
        assert tracebacks_in(log) == 1 and log.count("output is no longer emulated") == 1, log[-3000:]
        assert "pane %0" in log and "yyyy" not in log
    finally:
        s.stop()
