"""Run a command on a real terminal of a given size (a PTY of its own) and read what it wrote:
how a CLI that fits its output to the terminal is seen by a person, byte for byte."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
from collections.abc import Sequence

from muxd.testing.patience import Deadline, wait_process

PTY_RUN_TIMEOUT_S = 60.0
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def run_in_pty(argv: Sequence[str], env: dict[str, str], columns: int, lines: int = 50,
               timeout: float = PTY_RUN_TIMEOUT_S, *, styles: bool = False) -> tuple[int, str]:
    """Its exit status and its output (CR LF read as LF; colour styles removed unless `styles`).
    $COLUMNS and $LINES are taken out of `env`: the program sees the terminal's own size.
    `timeout` is a budget of machine time (testing/patience.py)."""
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    try:
        process = subprocess.Popen(list(argv), stdin=child, stdout=child, stderr=child, env=env,
                                   start_new_session=True)
    finally:
        os.close(child)
    deadline = Deadline(timeout)
    try:
        out = read_until_closed(parent, deadline)
        if out is None:
            process.kill()
            raise TimeoutError(f"{' '.join(argv)} still ran after {deadline.describe()}")
        status = wait_process(process, timeout)
    finally:
        os.close(parent)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    return status, text if styles else _SGR.sub("", text)


def read_until_closed(parent: int, deadline: Deadline) -> bytes | None:
    """What was written on a terminal, read from its other end (`parent`) until every holder of
    the terminal closed it; None if `deadline` expired first."""
    out = bytearray()
    while not deadline.expired():
        ready, _, _ = select.select([parent], [], [], deadline.next_wait_s())
        if not ready:
            continue
        try:
            data = os.read(parent, 65536)
        except OSError:  # EIO: every holder of the terminal's other end closed it
            return bytes(out)
        if not data:
            return bytes(out)
        out += data
    return None
