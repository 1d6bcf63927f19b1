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
import time
from collections.abc import Sequence

PTY_RUN_TIMEOUT_S = 60.0
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def run_in_pty(argv: Sequence[str], env: dict[str, str], columns: int, lines: int = 50,
               timeout: float = PTY_RUN_TIMEOUT_S) -> tuple[int, str]:
    """Its exit status and its output (CR LF read as LF, colour styles removed). $COLUMNS and
    $LINES are taken out of `env`: the program sees the terminal's own size."""
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    try:
        process = subprocess.Popen(list(argv), stdin=child, stdout=child, stderr=child, env=env,
                                   start_new_session=True)
    finally:
        os.close(child)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([parent], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                continue
            try:
                data = os.read(parent, 65536)
            except OSError:  # EIO: every holder of the terminal's other end closed it
                break
            if not data:
                break
            out += data
        else:
            process.kill()
            raise TimeoutError(f"{' '.join(argv)} still ran after {timeout:g} s")
        status = process.wait(timeout=timeout)
    finally:
        os.close(parent)
    return status, _SGR.sub("", out.decode("utf-8", "replace").replace("\r\n", "\n"))
