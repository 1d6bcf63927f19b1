"""The daemon forked by the client that needs it (client/daemon_fork.py): detached from the
client's terminal and files, it outlives the client and serves the next one; and where forking
is unsafe or not wanted, a fresh interpreter starts it instead."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from muxd.client.daemon_fork import DAEMON_START_ENV, fork_refusal
from muxd.errors import BadRequest
from muxd.testing.patience import Deadline, stretched, wait_process
from muxd.testing.pty_run import read_until_closed
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

# Runs argv[2:] as a session leader whose controlling terminal is the fd argv[1] names: a
# client typed at a terminal, as a person's shell starts it.
ON_A_TERMINAL = "import os, sys; os.login_tty(int(sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields from the state on (the command's name, in parentheses, may hold spaces)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def _session_and_tty(pid: int) -> tuple[int, int]:
    fields = _stat_fields(pid)
    return int(fields[3]), int(fields[4])  # session id, controlling terminal's device (0: none)


def _open_files(pid: int) -> dict[int, str]:
    folder = Path(f"/proc/{pid}/fd")
    files = {}
    for entry in folder.iterdir():
        try:
            files[int(entry.name)] = os.readlink(entry)
        except FileNotFoundError:  # closed while listed
            pass
    return files


def _start_on_a_terminal(server: MuxdTestServer, *words: str) -> tuple[subprocess.Popen[bytes], int]:
    """`muxd -L NAME words…` run on a terminal of its own (its controlling terminal), and that
    terminal's other end, which the caller reads and closes."""
    master, terminal = pty.openpty()
    try:
        client = subprocess.Popen(
            [sys.executable, "-c", ON_A_TERMINAL, str(terminal), sys.executable, "-m", "muxd", "-L", server.name,
             *words], env=server.env, pass_fds=(terminal,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
    finally:
        os.close(terminal)
    return client, master


def _drain_until_closed(master: int, client: subprocess.Popen[bytes]) -> bytes:
    """What the client wrote on its terminal, read until no one else holds the terminal open: the
    daemon, had it kept any of the client's files, would hold it past the client's exit."""
    deadline = Deadline(stretched(30))
    out = read_until_closed(master, deadline)
    assert out is not None, f"the terminal stayed open after {deadline.describe()}"
    wait_process(client, 30)
    return out


def test_a_forked_daemon_leaves_the_clients_terminal_and_outlives_it(muxd_unstarted: MuxdTestServer) -> None:
    server = muxd_unstarted
    client, master = _start_on_a_terminal(server, "new-session", "-d", "-s", "first", "--", "sleep", "600")
    try:
        # Read until its terminal's last holder closed it: the client's session was hung up.
        output = _drain_until_closed(master, client)
    finally:
        os.close(master)
    assert client.returncode == 0, output
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    assert server.running()
    argv = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    assert b"new-session" in argv, argv  # the client's own process, forked: no interpreter of its own
    session, tty = _session_and_tty(server.pid)
    assert session == server.pid, "the daemon leads a session of its own"
    assert tty == 0, "the daemon has no controlling terminal"
    files = _open_files(server.pid)
    assert files[0] == files[1] == os.devnull, files
    assert files[2] == str(server.log_path), files
    assert not [path for path in files.values() if path.startswith(("/dev/pts", "/dev/tty"))], files
    # The next client finds it and adds to it: the same daemon, two sessions.
    server.cli("new-session", "-d", "-s", "second", "--", "sleep", "600", check=True)
    status = json.loads(server.cli("server", "status", "--json", check=True).stdout)
    assert status["pid"] == server.pid and status["panes"] == 2, status
    assert int((server.socket_dir / f"{server.name}.lock").read_text().strip()) == server.pid


def test_a_forked_daemon_stops_on_sigterm_though_its_client_blocked_it(muxd_unstarted: MuxdTestServer) -> None:
    """The client's signal mask, handlers and exit handlers are not the daemon's: SIGTERM, which
    the client was started with blocked, ends the daemon its own way (socket removed, no
    traceback), and the process goes."""
    server = muxd_unstarted
    blocked = ("import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); "
               "os.execv(sys.argv[1], sys.argv[1:])")
    started = subprocess.run([sys.executable, "-c", blocked, sys.executable, "-m", "muxd", "-L", server.name,
                              "new-session", "-d", "-s", "term", "--", "sleep", "600"],
                             env=server.env, capture_output=True, text=True, timeout=stretched(30))
    assert started.returncode == 0, started.stderr
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    assert b"new-session" in Path(f"/proc/{server.pid}/cmdline").read_bytes()
    os.kill(server.pid, signal.SIGTERM)
    wait_until(lambda: not server.running(), timeout=stretched(20), message="the forked daemon's exit")
    assert not server.socket_path.exists()
    log = server.log_path.read_text()
    assert "Traceback" not in log, log


def test_a_forked_daemon_takes_relative_paths_from_the_clients_directory(muxd_unstarted: MuxdTestServer,
                                                                         tmp_path: Path) -> None:
    """The daemon runs in "/": a relative $MUXD_DB names a file where the client was started."""
    server = muxd_unstarted
    server.cli("new-session", "-d", "--", "sleep", "600", check=True, cwd=tmp_path, env={"MUXD_DB": "here.db"})
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    assert b"new-session" in Path(f"/proc/{server.pid}/cmdline").read_bytes()
    assert (tmp_path / "here.db").exists()


def test_a_bad_daemon_start_way_is_refused_in_one_line(muxd_unstarted: MuxdTestServer) -> None:
    server = muxd_unstarted
    result = server.cli("new-session", "-d", env={DAEMON_START_ENV: "spawn"})
    assert result.returncode == 1
    assert result.stderr.strip() == f"muxd: ${DAEMON_START_ENV} must be fork or exec, not 'spawn'", result.stderr
    assert not server.socket_path.exists()


def test_fork_is_refused_with_another_thread_running_or_exec_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DAEMON_START_ENV, "exec")
    assert fork_refusal() == f"${DAEMON_START_ENV} says exec"
    monkeypatch.setenv(DAEMON_START_ENV, "spawn")
    with pytest.raises(BadRequest):
        fork_refusal()
    monkeypatch.delenv(DAEMON_START_ENV)
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        assert fork_refusal() == "another thread runs"
    finally:
        release.set()
        other.join()


def test_a_client_without_stdout_or_stderr_forks_a_daemon_with_both(muxd_unstarted: MuxdTestServer) -> None:
    """A client started with fds 1 and 2 closed has no sys.stdout or sys.stderr: the daemon it
    forks gets /dev/null and the log there, and streams for them."""
    server = muxd_unstarted
    # Its exit status is not the point here: the CLI's own last flush fails without a stdout.
    subprocess.run(["sh", "-c", 'exec "$@" >&- 2>&-', "sh", sys.executable, "-m", "muxd", "-L", server.name,
                    "new-session", "-d", "-s", "closed", "--", "sleep", "600"],
                   env=server.env, timeout=stretched(30), check=False)
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    assert b"new-session" in Path(f"/proc/{server.pid}/cmdline").read_bytes()
    files = _open_files(server.pid)
    assert files[1] == os.devnull and files[2] == str(server.log_path), files
    status = json.loads(server.cli("server", "status", "--json", check=True).stdout)
    assert status["panes"] == 1, status


def test_the_tmux_shims_launcher_forks_the_daemon_it_starts(muxd_unstarted: MuxdTestServer, tmp_path: Path) -> None:
    """The launcher a shimmed pane runs `tmux` through (python -S, `site` added only for the
    full CLI) forks the daemon `tmux new-session` starts as the CLI does."""
    import muxd
    from muxd.daemon.tmux.shim import launcher_script

    server = muxd_unstarted
    launcher = tmp_path / "tmux"
    launcher.write_text(launcher_script(sys.executable, str(Path(muxd.__file__).parents[1])))
    launcher.chmod(0o700)
    started = subprocess.run([str(launcher), "-L", server.name, "new-session", "-d", "-s", "shim", "sleep 600"],
                             env=server.env, capture_output=True, text=True, timeout=stretched(30))
    assert started.returncode == 0, started.stderr
    server.pid = int((server.socket_dir / f"{server.name}.lock").read_text().strip())
    argv = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    assert b"new-session" in argv and b"-SP" in argv, argv  # the launcher's own process
    assert _session_and_tty(server.pid)[0] == server.pid
    status = json.loads(server.cli("server", "status", "--json", check=True).stdout)
    assert status["panes"] == 1, status


def test_a_start_that_times_out_is_killed_by_a_client_ignoring_sigchld(muxd_unstarted: MuxdTestServer) -> None:
    """A client started with SIGCHLD ignored (its children reaped by the system) still kills a
    forked daemon that did not start in time, and says so in one line; the next start serves."""
    server = muxd_unstarted
    ignoring = ("import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
                "os.execv(sys.argv[1], sys.argv[1:])")
    hasty = subprocess.run([sys.executable, "-c", ignoring, sys.executable, "-m", "muxd", "-L", server.name,
                            "start-server"], env={**server.env, "MUXD_START_TIMEOUT_S": "0.001"},
                           capture_output=True, text=True, timeout=stretched(30))
    assert hasty.returncode == 1, hasty.stderr
    assert hasty.stderr.strip() == "muxd: the muxd server did not start within 0.001s", hasty.stderr
    server.start()
    assert server.cli("server", "status").returncode == 0
