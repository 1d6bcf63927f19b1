"""Finding the server for a name, and starting it when none runs (as tmux does)."""

from __future__ import annotations

import os
import select
import sys
import time

import muxd
from muxd.client.daemon_fork import ForkedDaemon, fork_daemon, fork_refusal
from muxd.config import DAEMON_START_TIMEOUT_ENV, DAEMON_START_TIMEOUT_S
from muxd.errors import MuxdError, Timeout, error_from_code
from muxd.paths import DEFAULT_SERVER_NAME, ensure_socket_dir, ensure_state_dir, log_path, open_private
from muxd.store.location import MEMORY

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    import subprocess

LOG_TAIL_BYTES = 2000
# Where this client may not fork the daemon (client/daemon_fork.py), the daemon's interpreter
# starts without `site` (-S: its .pth files, an editable install's finder, cost each start ~20 ms)
# and finds its modules where this client found them: the client's sys.path,
# handed over in DAEMON_SYS_PATH_ENV, which the daemon removes before anything else reads it. A
# sitecustomize module on that path still runs first, as `site` would run it. The cyclic garbage
# collector is off until the daemon listens (muxd/daemon/main.py turns it on): its passes over
# the objects that imports pile up cost a start ~10 % and free next to nothing.
DAEMON_SYS_PATH_ENV = "MUXD_DAEMON_SYS_PATH"
DAEMON_BOOT = f"""import gc, os, sys
gc.disable()
sys.path[:] = os.environ.pop({DAEMON_SYS_PATH_ENV!r}).split(os.pathsep)
try:
    import sitecustomize
except ImportError as exc:
    if exc.name != "sitecustomize":
        raise
from muxd.daemon.main import main
raise SystemExit(main(sys.argv[1:]))
"""
# Variables naming a path the daemon opens (MUXD_DB may also be a URL).
PATH_VARIABLES = ("MUXD_SOCKET_DIR", "MUXD_DB", "MUXD_RECORD_DIR", "XDG_STATE_HOME",
                  "MUXD_CONFIG", "XDG_CONFIG_HOME")


def _log_tail(name: str) -> str:
    try:
        with open(log_path(name), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - LOG_TAIL_BYTES))
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def daemon_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a daemon started from here: relative paths in muxd's own variables made
    absolute, since the daemon runs in "/" (MUXD_DB=:memory: is no path: it stays)."""
    env = dict(os.environ) if env is None else dict(env)
    for variable in PATH_VARIABLES:
        value = env.get(variable)
        if value and value != MEMORY and "://" not in value and not os.path.isabs(value):
            env[variable] = os.path.abspath(value)
    return env


def daemon_sys_path() -> list[str]:
    """Where the daemon finds its modules: this client's sys.path less its first entry (the
    directory of the script or of the caller, unless -P left it out) and any relative entry (the
    daemon runs in "/"), then the directory holding this muxd when no entry does (an editable
    install finds it through a finder that `site` installs), so the daemon runs this client's muxd."""
    entries = sys.path if sys.flags.safe_path else sys.path[1:]
    path = list(dict.fromkeys(entry for entry in entries if os.path.isabs(entry)))
    root = os.path.dirname(os.path.dirname(os.path.abspath(muxd.__file__)))
    return path if root in path else [*path, root]


def start_timeout_s() -> float:
    """How long a client waits for a daemon it starts: $MUXD_START_TIMEOUT_S, else the default."""
    try:
        value = float(os.environ.get(DAEMON_START_TIMEOUT_ENV, ""))
    except ValueError:
        return DAEMON_START_TIMEOUT_S
    return value if value > 0 else DAEMON_START_TIMEOUT_S


def start_server(name: str = DEFAULT_SERVER_NAME, *, timeout_s: float | None = None,
                 extra_args: list[str] | None = None) -> int:
    """Start a detached daemon for `name`, forked from this client where that is safe, else in a
    fresh interpreter (client/daemon_fork.py); returns its pid once it listens (within
    `timeout_s`, by default start_timeout_s()).

    Raises ServerAlreadyRunning if another daemon owns the name, or MuxdError with the daemon's
    own words when it fails to start.
    """
    forking = fork_refusal() is None
    ensure_socket_dir()
    ensure_state_dir()
    log_fd = open_private(log_path(name), os.O_WRONLY | os.O_APPEND)
    read_fd, write_fd = os.pipe()
    args = ["--name", name, *(extra_args or [])]
    try:
        if forking:
            process: subprocess.Popen[bytes] | ForkedDaemon = fork_daemon(
                args, ready_fd=write_fd, log_fd=log_fd, env=daemon_env(), sys_path=daemon_sys_path())
        else:
            process = _exec_daemon(args, ready_fd=write_fd, log_fd=log_fd)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(log_fd)
        os.close(write_fd)
    if timeout_s is None:
        timeout_s = start_timeout_s()
    try:
        lines = _read_report(read_fd, timeout_s)
    finally:
        os.close(read_fd)
    for warning in lines[:-1]:  # the config file's bad lines, before how the start went
        print(f"muxd: {warning.removeprefix('warning ')}", file=sys.stderr)
    line = lines[-1]
    if line == "ready":
        return process.pid
    if line.startswith("error "):
        _, code, message = (line.split(" ", 2) + [""])[:3]
        raise error_from_code(code, message)
    if line == "" and process.poll() is None:
        process.kill()
        raise Timeout(f"the muxd server did not start within {timeout_s:g}s")
    raise MuxdError(f"the muxd server failed to start: {_log_tail(name) or 'no log'}")


def _exec_daemon(args: list[str], *, ready_fd: int, log_fd: int) -> subprocess.Popen[bytes]:
    """The daemon in a fresh interpreter (where this client may not fork it: daemon_fork.py)."""
    # -P, cwd "/" and daemon_sys_path(): the daemon imports muxd from where this client did,
    # never from the directory the command was typed in (an untrusted checkout could hold a
    # muxd/ of its own).
    import subprocess  # only here: a forked daemon needs none of it

    env = {**daemon_env(), DAEMON_SYS_PATH_ENV: os.pathsep.join(daemon_sys_path())}
    return subprocess.Popen(
        [sys.executable, "-S", "-P", "-c", DAEMON_BOOT, *args, "--ready-fd", str(ready_fd)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_fd, cwd="/", env=env,
        pass_fds=(ready_fd,), start_new_session=True, close_fds=True,
    )


def _read_report(fd: int, timeout_s: float) -> list[str]:
    """The lines the daemon reports, its final one (`ready`, `error …`, or "" for none within
    the time or before the pipe closed) last."""
    deadline = time.monotonic() + timeout_s
    data = b""
    while True:
        lines = [line.strip() for line in data.decode("utf-8", "replace").split("\n")]
        if any(line == "ready" or line.startswith("error ") for line in lines[:-1]):
            return [line for line in lines if line]
        remaining = deadline - time.monotonic()
        ready = select.select([fd], [], [], remaining)[0] if remaining > 0 else []
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:
            return [line for line in lines if line.startswith("warning ")] + [""]
        data += chunk


def start_unless_running(name: str = DEFAULT_SERVER_NAME) -> None:
    """Start the daemon for `name` unless one runs already (another starter may win the race)."""
    try:
        start_server(name)
    except MuxdError as exc:
        if exc.code != "server_running":
            raise
