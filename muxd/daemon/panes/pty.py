"""Starting a program on a fresh pseudo-terminal, and asking the kernel about it. No asyncio here."""

from __future__ import annotations

import fcntl
import functools
import os
import pty
import struct
import subprocess
import termios

import msgspec

from muxd.errors import SpawnFailed


class PtyProcess(msgspec.Struct):
    pid: int
    master_fd: int
    popen: subprocess.Popen[bytes]
    tty: str | None = None  # the slave's device path (tmux's #{pane_tty})


# util-linux's setsid: `setsid -c -- argv…` makes its process a session leader whose controlling
# terminal is its stdin, then execs argv in that same process. Through it a pane's program starts
# from a vfork (~0.3 ms); a preexec_fn setting the terminal makes subprocess fork the whole
# daemon and run Python in the child first (~2-3 ms of every spawn, a cold start's first reply's
# among them). Where it is not installed, the preexec_fn does it.
SETSID_PATHS = ("/usr/bin/setsid", "/bin/setsid")


@functools.cache
def _setsid() -> str | None:
    return next((path for path in SETSID_PATHS if os.access(path, os.X_OK)), None)


def _become_controlling_terminal() -> None:
    # Runs in the child after setsid() and after fd 0 became the PTY slave.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def set_window_size(fd: int, columns: int, lines: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))


def readable_bytes(master_fd: int) -> int:
    """Bytes a read of the master would return at once (FIONREAD). Unlike a read, this never
    waits: a read finding none waits for the kernel's worker to move what the program wrote
    since, which on a busy machine can take milliseconds (0 when it cannot be told)."""
    count = bytearray(4)
    try:
        fcntl.ioctl(master_fd, termios.FIONREAD, count)
    except OSError:
        return 0
    return int(struct.unpack("i", count)[0])


def resolve_program(argv: list[str], env: dict[str, str], cwd: str) -> str:
    """The executable for argv[0], or a SpawnFailed that says why not."""
    program = argv[0]
    if "/" in program:
        path = program if os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.exists(path):
            raise SpawnFailed(f"{program}: no such file", command=argv)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise SpawnFailed(f"{program}: not an executable file", command=argv)
        return path
    import shutil  # here: its archive modules cost a daemon's start ~3 ms, and a shell is named by its path

    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise SpawnFailed(f"{program}: command not found", command=argv)
    return found


def spawn(argv: list[str], *, env: dict[str, str], cwd: str, columns: int, lines: int) -> PtyProcess:
    """Start argv as the session leader of a new PTY sized columns×lines."""
    if not argv:
        raise SpawnFailed("empty command")
    if not os.path.isdir(cwd):
        raise SpawnFailed(f"{cwd}: no such directory", cwd=cwd)
    executable = resolve_program(argv, env, cwd)
    master, slave = pty.openpty()
    tty = os.ttyname(slave)
    try:
        set_window_size(master, columns, lines)
        os.set_blocking(master, False)
        os.set_inheritable(master, False)
        setsid = _setsid()
        if setsid is not None:  # it finds argv[0] on the PATH of `env` as resolve_program did
            popen = subprocess.Popen([setsid, "-c", "--", *argv], executable=setsid, stdin=slave, stdout=slave,
                                     stderr=slave, cwd=cwd, env=env, close_fds=True)
        else:
            popen = subprocess.Popen(
                argv,
                executable=executable,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=_become_controlling_terminal,  # noqa: PLW1509 - the one way to set a controlling tty
                close_fds=True,
            )
    except OSError as exc:
        os.close(master)
        raise SpawnFailed(f"{argv[0]}: {exc.strerror or exc}", command=argv) from exc
    finally:
        os.close(slave)
    return PtyProcess(pid=popen.pid, master_fd=master, popen=popen, tty=tty)


def foreground_pid(master_fd: int) -> int | None:
    """The process group leader in the foreground of the terminal (None if it cannot be told)."""
    try:
        pgid = os.tcgetpgrp(master_fd)
    except OSError:
        return None
    return pgid if pgid > 0 else None


def terminal_foreground_pid(pid: int) -> int | None:
    """The foreground process group of `pid`'s controlling terminal, read from /proc: for a
    terminal whose master muxd does not hold (a pane adopted from tmux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields after the name: state, ppid, pgrp, session, tty_nr, tpgid
    tpgid = int(fields[5]) if len(fields) > 5 and fields[5].lstrip("-").isdigit() else -1
    return tpgid if tpgid > 0 else None


def process_cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def process_exe(pid: int) -> str | None:
    """The executable `pid` runs (None if it cannot be told): changes when the process execs."""
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


def process_argv(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def process_name(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def group_child(pid: int) -> int | None:
    """The newest child of `pid` in `pid`'s own process group, or None.

    A shell without job control (`sh -c "agent; exec bash"`) runs its commands in its own
    process group, so the terminal's foreground group leader is the shell while the program
    the user sees is its child."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            children = [int(child) for child in fh.read().split()]
    except (OSError, ValueError):
        return None
    for child in reversed(children):
        try:
            with open(f"/proc/{child}/stat", encoding="utf-8", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields after the name: state, ppid, pgrp, …; a zombie has finished already
        if len(fields) > 2 and fields[2] == str(pid) and fields[0] != "Z":
            return child
    return None
