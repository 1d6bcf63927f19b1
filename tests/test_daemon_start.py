"""What a daemon puts off until it has answered: the command modules its first requests do not
use (commands/__init__.py), the services its first reply does not use (built at their first use),
and until it has a pane, the detector plug-in lookup (detectors/registry.py) and the emulator's
warm-up (server.py's _settle_in, _pane_steps); and that a pane its first request started is still
followed by all of them."""

from __future__ import annotations

import asyncio
import json
import os
import pkgutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from muxd.daemon import commands
from muxd.config import EMULATION_REQUEST_RECENT_S
from muxd.daemon.commands import FIRST_MODULES, LATER_MODULES, CommandTable, load_all
from muxd.daemon.server import Daemon
from muxd.detectors.base import Detector
from muxd.detectors.registry import Detectors, load_detectors
from muxd.protocol.messages import ListEvents, NewSession
from muxd.testing.fake_agent_panes import FAKE_AGENT, START_TIMEOUT_S, agent_state
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import async_wait_until, wait_until

_LATER = "muxd.daemon.commands.events"


async def _true(value: bool) -> bool:
    return value


def test_every_command_module_is_in_the_table() -> None:
    modules = {info.name for info in pkgutil.iter_modules(commands.__path__)} - {"table"}
    assert sorted(FIRST_MODULES + LATER_MODULES) == sorted(modules)


def test_the_table_imports_the_other_modules_when_a_request_needs_them() -> None:
    script = f"""
import sys
from muxd.daemon.commands import CommandTable
from muxd.protocol.messages import ListEvents, NewSession
table = CommandTable()
print({_LATER!r} in sys.modules, table.get(NewSession) is not None, {_LATER!r} in sys.modules,
      table.get(ListEvents) is not None, {_LATER!r} in sys.modules, table.get(int))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False", "True", "False", "True", "True", "None"]


def test_the_table_lists_every_command_once_loaded() -> None:
    table = CommandTable()
    assert dict(table) == load_all()
    assert NewSession in table and ListEvents in table and table.loaded


class _Counted:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> list[Detector]:
        self.calls += 1
        return load_detectors()


def test_the_detectors_are_looked_up_once_at_their_first_reading() -> None:
    load = _Counted()
    detectors = Detectors(load)
    assert load.calls == 0
    names = [detector.name for detector in detectors]
    assert load.calls == 1 and "claude" in names and len(detectors) == len(names)
    assert detectors[0].name == names[0] and load.calls == 1


def test_a_daemon_settles_in_after_its_first_reply_or_unasked_and_warms_up_at_its_first_pane() -> None:
    asked, unasked = MuxdTestServer().start(), MuxdTestServer().start()
    try:
        asked.cli("ls")
        for server in (asked, unasked):  # unasked: SETTLE_IN_IDLE_S after it listens
            wait_until(lambda: "settled in" in server.log_path.read_text(), timeout=20,
                       message="the deferred work's last log line")
            assert "emulator " not in server.log_path.read_text()  # no pane: the emulator is not warmed up
        asked.cli("new-session", "-d", check=True)
        wait_until(lambda: "emulator " in asked.log_path.read_text(), timeout=20,
                   message="the warm-up's log line, at the first pane")
    finally:
        asked.stop()
        unasked.stop()


def test_the_table_loads_in_steps_of_one_module() -> None:
    table = CommandTable()
    steps = table.loading_steps()
    assert len(steps) == len(LATER_MODULES) + 1
    for step in steps:
        step()
    assert table.loaded and dict(table) == load_all()


def test_the_deferred_work_waits_while_a_client_is_being_answered(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A step of the start's deferred work does not run while a connection was just accepted
    (its request is on the way): it runs once the daemon has been quiet a while."""
    monkeypatch.setenv("MUXD_DB", str(tmp_path / "t.db"))

    async def scenario() -> tuple[list[float], float]:
        daemon = Daemon(tmp_path / "t.sock", tmp_path / "t.lock", commands=CommandTable(), detection=False)
        try:
            ran: list[float] = []
            daemon._accepted_at = accepted = time.monotonic()
            daemon._settle_in([lambda: ran.append(time.monotonic())])
            assert ran == []  # not in the same turn as the accept
            await async_wait_until(lambda: _true(bool(ran)), timeout=10, message="the deferred step")
            return ran, accepted
        finally:
            daemon.access.close()

    ran, accepted = asyncio.run(scenario())
    assert ran[0] - accepted >= EMULATION_REQUEST_RECENT_S


def test_the_daemons_start_compiles_no_pattern_of_a_usage_limit_or_an_error_nor_reads_hook_lines(tmp_path: Path) -> None:
    script = """
import muxd.daemon.main, muxd.daemon.server
from muxd.daemon.commands import CommandTable
from muxd.detectors import reset_time
from muxd.executions import fingerprint
import asyncio, sys
from muxd.store.database import Database
from muxd.store.sqlite_executions import SqliteExecutionStore
CommandTable()
db = Database(sys.argv[1])
store = SqliteExecutionStore(db)
assert asyncio.run(store.interrupt_running(0.0)) == 0  # what a clean start runs before it listens
store.close(); db.close()
print(reset_time._compiled.cache_info().currsize, fingerprint._normalisers.cache_info().currsize,
      "muxd.daemon.core.cli_lines" in sys.modules)
print(reset_time.reset_at("resets in 2h 30m", 1000.0), fingerprint.normalise_error("retry in 12s (req_01H)  at /tmp/x"))
print(reset_time._compiled.cache_info().currsize > 0, fingerprint._normalisers.cache_info().currsize)
"""
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "history.db")], capture_output=True, text=True,
                         check=True, timeout=120)
    before, used, after = out.stdout.splitlines()
    # Imported before the daemon listens, compiled at their first use only; set-hook's command
    # lines (with argparse) are read at the first hook run.
    assert before == "0 0 False"
    assert used == "10000.0 retry in <duration> (<id>) at <path>"
    assert after == "True 1"


# Imported at their first use or after the first reply, never before the daemon listens; nor are
# logging.handlers (log_file.py rotates the log itself), dataclasses (the records on the path are
# Structs), or typing_extensions (msgspec_first.py).
_PUT_OFF = ("muxd.detectors.runner", "muxd.detectors.base", "muxd.detectors.fusion", "muxd.detectors._agent_cli",
            "muxd.daemon.work.execution_finish", "muxd.daemon.work.session_log_finder",
            "muxd.daemon.access.audit_queue", "muxd.daemon.access.call_metrics", "muxd.daemon.panes.hook_intake",
            "muxd.rate_limit", "muxd.daemon.client_side.key_bindings", "muxd.daemon.panes.paste_buffers",
            "logging.handlers", "dataclasses", "typing_extensions")


def test_a_daemon_is_built_without_the_services_its_first_reply_does_not_use(tmp_path: Path) -> None:
    script = """
import asyncio, sys
from pathlib import Path
import muxd.daemon.main
from muxd.daemon.commands import CommandTable
from muxd.daemon.server import Daemon

async def build() -> None:
    daemon = Daemon(Path(sys.argv[1]) / "d.sock", Path(sys.argv[1]) / "d.lock", commands=CommandTable())
    daemon.access.close()

asyncio.run(build())
print(" ".join(name for name in sys.argv[2:] if name in sys.modules) or "none")
"""
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path), *_PUT_OFF], capture_output=True, text=True,
                         check=True, timeout=120, env={**os.environ, "MUXD_DB": str(tmp_path / "d.db")})
    assert out.stdout.split() == ["none"]


def test_the_first_requests_agent_pane_is_detected_and_its_turns_recorded(muxd_unstarted: MuxdTestServer) -> None:
    """The pane new-session starts with the daemon (its first request) is followed from its start by
    what is built after that reply: its detector state is reported, its turns are in the history."""
    s = muxd_unstarted
    pane = s.cli("new-session", "-d", "-P", "-s", "first", "--name", "first", "--", *FAKE_AGENT, "claude",
                 check=True).stdout.strip()
    wait_until(lambda: agent_state(s, pane) == "Idle", timeout=START_TIMEOUT_S, message="the first pane's agent idle")
    listed = json.loads(s.cli("list-panes", "-a", "--json", check=True).stdout)
    assert [p["agent"]["agent_type"] for p in listed] == ["claude"]
    done = json.loads(s.cli("submit", "-t", pane, "add a flag", "--wait", "--json", check=True).stdout)
    assert done["status"] == "success" and done["pane_id"] == pane
    rows = json.loads(s.cli("history", "--json", check=True).stdout)["executions"]
    assert [(r["message"], r["status"]) for r in rows] == [("add a flag", "success")]


def test_the_first_requests_shell_pane_has_its_commands_recorded(muxd_unstarted: MuxdTestServer) -> None:
    """A shell pane started by the daemon's first request writes prompt marks from its first
    prompt: a command typed into it is an execution with its exit status."""
    s = muxd_unstarted
    shell = s.cli("new-session", "-d", "-P", "-s", "first", check=True).stdout.strip()
    wait_until(lambda: s.cli("run", "-t", shell, "--wait", "--", "true").returncode == 0 or None, timeout=15,
               interval=0.5, message="a command typed into the first pane's shell")
    failed = s.cli("run", "-t", shell, "--wait", "--", "ls /no/such/dir")
    assert failed.returncode == 2, failed.stdout + failed.stderr
    rows = json.loads(s.cli("history", "--json", check=True).stdout)["executions"]
    assert [(r["pane_id"], r["exit_code"]) for r in rows[:2]] == [(shell, 2), (shell, 0)]
