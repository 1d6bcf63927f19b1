"""`muxd systemd-unit`: a unit systemd accepts, whose ExecStart (`start-server -f`) runs the
server in the foreground as a service manager needs, serves, and ends cleanly on SIGTERM."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from muxd.testing.server import MuxdTestServer, process_alive
from muxd.testing.wait import wait_until

STOP_TIMEOUT_S = 30.0


def _unit(server: MuxdTestServer) -> configparser.ConfigParser:
    text = server.cli("systemd-unit", check=True).stdout
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str  # type: ignore[assignment, method-assign]  # systemd keys are case-sensitive
    unit.read_string(text)
    return unit


def test_the_unit_runs_the_named_server_in_the_foreground(muxd_unstarted: MuxdTestServer) -> None:
    unit = _unit(muxd_unstarted)
    assert unit.sections() == ["Unit", "Service", "Install"]
    argv = shlex.split(unit["Service"]["ExecStart"])
    assert argv[-4:] == ["-L", muxd_unstarted.name, "start-server", "-f"]
    assert os.access(argv[0], os.X_OK)  # a command systemd can run, without a shell
    assert unit["Service"]["Type"] == "exec" and unit["Install"]["WantedBy"] == "default.target"


def test_systemd_accepts_the_unit(muxd_unstarted: MuxdTestServer, tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    path = tmp_path / "muxd.service"
    path.write_text(muxd_unstarted.cli("systemd-unit", check=True).stdout)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    # --man=no: muxd(1) is not installed where man looks; every other key and value is checked.
    result = subprocess.run(["systemd-analyze", "--user", "verify", "--man=no", str(path)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_start_server_f_serves_in_the_foreground_and_ends_on_sigterm(muxd_unstarted: MuxdTestServer) -> None:
    server = muxd_unstarted
    argv = shlex.split(_unit(server)["Service"]["ExecStart"])  # what systemd would run
    process = subprocess.Popen(argv, env=server.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: process.poll() is not None or server.cli("server", "status").returncode == 0,
                   timeout=STOP_TIMEOUT_S, message="the foreground server answering")
        assert process.poll() is None, process.communicate()
        status = json.loads(server.cli("server", "status", "--json", check=True).stdout)
        assert status["pid"] == process.pid  # the server is this process, not a child it left behind
        assert status["log"] == str(server.log_path)
        server.cli("new-session", "-d", "-s", "kept", "--", "sleep", "600", check=True)
        pane_pid = int(server.cli("display-message", "-p", "-t", "kept", "#{pane_pid}", check=True).stdout)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=STOP_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "Traceback" not in err and "Traceback" not in server.log_path.read_text()
    assert not server.socket_path.exists()
    wait_until(lambda: not process_alive(pane_pid), timeout=STOP_TIMEOUT_S, message="the pane's program ended")
