"""Starting the daemon: `muxd new` in an untrusted checkout must not run code from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from muxd.client.autostart import DAEMON_SYS_PATH_ENV, daemon_env
from muxd.client.daemon_fork import DAEMON_START_ENV, DAEMON_START_WAYS
from muxd.testing.patience import stretched, wait_process
from muxd.testing.server import MuxdTestServer

PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('planted code ran')\n"


@pytest.mark.parametrize("way", DAEMON_START_WAYS)
def test_the_daemon_is_not_imported_from_the_callers_directory(muxd_unstarted: MuxdTestServer,
                                                                tmp_path: Path, way: str) -> None:
    checkout = tmp_path / "checkout"
    marker = tmp_path / "marker"
    for module in ("muxd/__init__.py", "muxd/daemon/__init__.py", "muxd/daemon/main.py", "muxd/__main__.py"):
        (checkout / module).parent.mkdir(parents=True, exist_ok=True)
        (checkout / module).write_text(PLANTED.format(marker=str(marker)))
    muxd_script = Path(sys.executable).with_name("muxd")  # the installed command, as a user types it
    assert muxd_script.exists(), muxd_script
    server = muxd_unstarted
    result = subprocess.run([str(muxd_script), "-L", server.name, "new-session", "-d", "-P", "--", "sleep", "600"],
                            cwd=checkout, env={**server.env, DAEMON_START_ENV: way}, capture_output=True, text=True, timeout=stretched(30))
    assert result.returncode == 0, result.stderr
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    assert not marker.exists(), "the daemon ran code from the directory `muxd` was typed in"
    status = json.loads(server.cli("server", "status", "--json", check=True).stdout)
    assert status["panes"] == 1
    assert Path(f"/proc/{server.pid}/cwd").resolve() == Path("/")


def test_relative_paths_handed_to_the_daemon_are_made_absolute(tmp_path: Path) -> None:
    env = daemon_env({"MUXD_DB": "state/x.db", "MUXD_SOCKET_DIR": "/abs", "MUXD_RECORD_DIR": "casts",
                      "OTHER": "rel"})
    assert env["MUXD_DB"] == str(Path.cwd() / "state/x.db")
    assert env["MUXD_RECORD_DIR"] == str(Path.cwd() / "casts")
    assert env["MUXD_SOCKET_DIR"] == "/abs" and env["OTHER"] == "rel"


def test_start_server_in_the_foreground_serves_until_killed(muxd_unstarted: MuxdTestServer) -> None:
    """`start-server -f` (for systemd and containers) runs the daemon in the command's own
    process: it serves, and returns 0 once kill-server stops it."""
    from muxd.testing.wait import wait_until

    server = muxd_unstarted
    foreground = subprocess.Popen([sys.executable, "-m", "muxd", "-L", server.name, "start-server", "-f"],
                                  env=server.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: server.cli("server", "status").returncode == 0, message="the foreground server answers")
        status = json.loads(server.cli("server", "status", "--json", check=True).stdout)
        assert status["pid"] == foreground.pid  # the command's own process is the server
        server.cli("kill-server", check=True)
        assert wait_process(foreground, 30) == 0
    finally:
        if foreground.poll() is None:
            foreground.kill()
            foreground.wait()
    assert "Traceback" not in foreground.stderr.read()


def test_a_start_waits_as_long_as_muxd_start_timeout_s_says(muxd_unstarted: MuxdTestServer) -> None:
    """$MUXD_START_TIMEOUT_S is how long a client waits for the daemon it starts (a loaded machine
    may need longer than the default): far too short a wait gives up, naming it, and the next
    start, with the default, serves."""
    server = muxd_unstarted
    hasty = server.cli("start-server", env={"MUXD_START_TIMEOUT_S": "0.001"})
    assert hasty.returncode != 0 and "did not start within 0.001s" in hasty.stderr, hasty.stderr
    server.start()
    assert server.cli("server", "status").returncode == 0


@pytest.mark.parametrize("way", DAEMON_START_WAYS)
def test_the_daemon_runs_the_callers_muxd_and_its_panes_never_see_its_path(muxd_unstarted: MuxdTestServer,
                                                                            way: str) -> None:
    """Forked, the daemon is the client's process (its command line); started fresh, its
    interpreter runs without `site` (client/autostart.py hands it the client's sys.path instead).
    Either way no variable carrying that path reaches a pane."""
    from muxd.testing.wait import wait_until

    server = muxd_unstarted
    server.cli("new-session", "-d", "-s", "paths", "--", "sh", "-c",
               f"env | grep -c {DAEMON_SYS_PATH_ENV}; echo counted; sleep 600", check=True,
               env={DAEMON_START_ENV: way})
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    argv = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    if way == "exec":
        assert b"-S" in argv[1:4], argv
    else:
        assert b"new-session" in argv and b"-S" not in argv, argv
    wait_until(lambda: "counted" in server.cli("capture-pane", "-p", "-t", "paths").stdout,
               message="the pane counted its variables")
    lines = server.cli("capture-pane", "-p", "-t", "paths", check=True).stdout.split()
    assert lines[lines.index("counted") - 1] == "0", lines
