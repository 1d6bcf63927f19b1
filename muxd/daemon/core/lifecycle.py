"""Owning a server name: one daemon per socket, enforced with a lock file.

The lock (flock) is held for the daemon's life and released by the kernel if it dies, so
a socket file whose lock is free is stale and may be replaced, while a held lock means a
live daemon that a second one must not clobber.
"""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

from muxd.errors import ServerAlreadyRunning
from muxd.paths import ensure_socket_dir, open_private

LISTEN_BACKLOG = 128


class ServerClaim:
    """The lock and listening socket of one server name; `release()` gives both up."""

    def __init__(self, socket_path: Path, lock_path: Path) -> None:
        self.socket_path = socket_path
        self.lock_path = lock_path
        self._lock_fd: int | None = None
        self.sock: socket.socket | None = None
        self._inode: int | None = None

    def acquire(self) -> socket.socket:
        ensure_socket_dir(self.socket_path.parent)
        fd = open_private(self.lock_path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ServerAlreadyRunning(
                f"a muxd server is already running on {self.socket_path}", socket=str(self.socket_path)
            ) from None
        self._lock_fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        if self.socket_path.exists() or self.socket_path.is_symlink():
            self.socket_path.unlink()  # stale: its daemon died without cleaning up
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(str(self.socket_path))
        finally:
            os.umask(old_umask)
        sock.listen(LISTEN_BACKLOG)
        sock.setblocking(False)
        self._inode = self.socket_path.stat().st_ino
        self.sock = sock
        return sock

    def release(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        try:
            if self._inode is not None and self.socket_path.stat().st_ino == self._inode:
                self.socket_path.unlink()
        except FileNotFoundError:
            pass
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
