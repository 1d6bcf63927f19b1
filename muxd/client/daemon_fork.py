"""Starting the daemon in a fork of the client that needs it, as tmux does: the client has paid
for an interpreter's start and for the modules both import already (a fresh daemon pays ~15-20 ms
of CPU for them again), so the child detaches from the client's terminal, session and files,
takes the state a fresh interpreter would have, and runs muxd.daemon.main where it stands.

Only where that is safe (fork_refusal); client/autostart.py starts a fresh interpreter elsewhere.
"""

from __future__ import annotations

import fcntl
import gc
import os
import signal
import sys

from muxd.errors import BadRequest

TYPE_CHECKING = False  # typing only for the type checker: see cli/table.py
if TYPE_CHECKING:
    from typing import NoReturn

# How a client starts the daemon: "fork" (where fork_refusal finds nothing against it) or "exec"
# (a fresh interpreter, always): for a daemon that must start from nothing the client imported,
# and for the tests and benchmarks of both ways.
DAEMON_START_ENV = "MUXD_DAEMON_START"
DAEMON_START_WAYS = ("fork", "exec")
# The readiness pipe's end, moved here in the child: every fd above it is closed.
READY_FD = 3
# Where the child moves the log and the pipe while it sets fds 0-3.
SPARE_FD_FLOOR = 10


def fork_refusal() -> str | None:
    """Why this process must not fork the daemon (None when it may; BadRequest for a way
    $MUXD_DAEMON_START does not know): a fork copies one thread only, so a lock another thread
    held stays held in the child; and an event loop's selector, its self-pipe and the objects
    owning them would follow the daemon into its own loop."""
    chosen = os.environ.get(DAEMON_START_ENV) or "fork"
    if chosen not in DAEMON_START_WAYS:
        raise BadRequest(f"${DAEMON_START_ENV} must be {' or '.join(DAEMON_START_WAYS)}, not {chosen!r}")
    if chosen == "exec":
        return f"${DAEMON_START_ENV} says exec"
    if not hasattr(os, "fork"):
        return "this system has no fork"
    import threading

    if threading.active_count() > 1:
        return "another thread runs"
    if "asyncio" in sys.modules:
        return "asyncio is loaded (an event loop's files would follow the daemon)"
    return None


class ForkedDaemon:
    """The forked daemon as its starter sees it, with the calls of subprocess.Popen it uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Its exit status once it ended (reaped then), else None."""
        if self.returncode is None:
            self.returncode = self._reaped(os.WNOHANG)
        return self.returncode

    def kill(self) -> None:
        """Kill it and reap it (a daemon that did not start in time)."""
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.returncode = self._reaped(0)

    def _reaped(self, options: int) -> int | None:
        try:
            pid, status = os.waitpid(self.pid, options)
        except ChildProcessError:  # reaped by the system: the client was started with SIGCHLD ignored
            return 0  # as subprocess.Popen says then
        return os.waitstatus_to_exitcode(status) if pid else None


def fork_daemon(args: list[str], *, ready_fd: int, log_fd: int, env: dict[str, str],
                sys_path: list[str]) -> ForkedDaemon:
    """Fork the daemon (muxd.daemon.main's `args`, told to report on READY_FD, which `ready_fd`
    becomes in the child; its stderr `log_fd`; `env` its environment, `sys_path` where it finds
    modules). Only where fork_refusal() found nothing."""
    for stream in (sys.stdout, sys.stderr):  # nothing written before the fork may be written twice
        if stream is not None:  # None: the client was started with that fd closed
            stream.flush()
    pid = os.fork()
    if pid == 0:
        # The client's objects stay as the fork left them: the collector, off until the daemon
        # listens and then frozen over all of them, never finalizes one (which could close a
        # file number the daemon has since reused), nor do its frames, never resumed, let go of any.
        gc.disable()
        _run_daemon([*args, "--ready-fd", str(READY_FD)], ready_fd, log_fd, env, sys_path)
    return ForkedDaemon(pid)


def _run_daemon(args: list[str], ready_fd: int, log_fd: int, env: dict[str, str],
                sys_path: list[str]) -> NoReturn:
    """The child: detached, then the daemon; never returns into the client's code (its frames,
    with their `finally` and `with` blocks, stay where the fork left them) and exits as the
    interpreter would, without the client's exit handlers or buffered output."""
    status = 1
    try:
        _detach(ready_fd, log_fd)
        _fresh_state(env, sys_path, args)
        from muxd.daemon.main import main

        status = main(args)
    except SystemExit as exc:
        status = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # the daemon's own failure: said in its log, as a fresh interpreter would
        import traceback

        traceback.print_exc()
    finally:
        _finish(status)


def _detach(ready_fd: int, log_fd: int) -> None:
    """A session of its own (no controlling terminal: the client's terminal closing sends it no
    hangup), "/" as its directory, /dev/null for stdin and stdout, the log for stderr, and no
    other file of the client's open but the readiness pipe, at READY_FD."""
    os.setsid()
    os.chdir("/")
    # Both out of the way first: a client started with stdin or stdout closed may hold either there.
    log_fd = fcntl.fcntl(log_fd, fcntl.F_DUPFD_CLOEXEC, SPARE_FD_FLOOR)
    ready_fd = fcntl.fcntl(ready_fd, fcntl.F_DUPFD_CLOEXEC, SPARE_FD_FLOOR)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(log_fd, 2)
    os.dup2(ready_fd, READY_FD, inheritable=False)  # the daemon's own children never hold it
    os.closerange(READY_FD + 1, os.sysconf("SC_OPEN_MAX"))
    # A client started with stdout or stderr closed has no stream for it; the daemon has both.
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)


def _fresh_state(env: dict[str, str], sys_path: list[str], args: list[str]) -> None:
    """What a fresh interpreter would start the daemon with: the environment and module path
    the exec way hands it, no signal handler nor exit handler of the client's, no signal blocked
    (and the collector off until the daemon listens: muxd/daemon/main.py)."""
    import atexit

    atexit._clear()
    os.environ.clear()
    os.environ.update(env)
    sys.path[:] = sys_path
    sys.argv[1:] = args
    signal.set_wakeup_fd(-1)
    # A handler of the client's goes, as an exec would drop it; what is ignored stays ignored, as
    # an exec keeps it (SIGPIPE among them, which Python ignores at start anyway).
    for number in signal.valid_signals():
        handler = signal.getsignal(number)
        if callable(handler) and handler is not signal.default_int_handler:
            signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


def _finish(status: int) -> NoReturn:
    """Exit as the interpreter's own end would begin (its threads joined, among them the
    database's writer, then the daemon's exit handlers run, its output written), without
    unwinding into the client."""
    try:
        import atexit
        import threading

        threading._shutdown()  # type: ignore[attr-defined]  # what Py_Finalize calls first
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    finally:
        os._exit(status)
