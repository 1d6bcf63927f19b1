"""A PTY's waiting bytes are told without a read (a read finding none waits in the kernel)."""

from __future__ import annotations

import os
import pty

from muxd.daemon.panes import pty as ptys
from muxd.testing.wait import wait_until


def test_readable_bytes_tells_what_a_read_would_return_at_once() -> None:
    master, slave = pty.openpty()
    try:
        os.write(slave, b"hello")
        wait_until(lambda: ptys.readable_bytes(master) == 5, timeout=10, message="the PTY holding 5 bytes")
        assert os.read(master, 100) == b"hello"
        assert ptys.readable_bytes(master) == 0
    finally:
        os.close(master)
        os.close(slave)
    assert ptys.readable_bytes(master) == 0  # a closed fd: nothing to read
