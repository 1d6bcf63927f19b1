"""Finding the server for a name, and starting it when none runs (as tmux does)."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import sys
import time

from muxd.client.connection import Client
from muxd.config import DAEMON_START_TIMEOUT_S
from muxd.errors import MuxdError, ServerNotRunning, Timeout, error_from_code
from muxd.paths import DEFAULT_SERVER_NAME, ensure_socket_dir, log_path, socket_path

LOG_TAIL_BYTES = 2000


def _log_tail(name: str) -> str:
    try:
        with open(log_path(name), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - LOG_TAIL_BYTES))
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def start_server(name: str = DEFAULT_SERVER_NAME, *, timeout_s: float = DAEMON_START_TIMEOUT_S,
                 extra_args: list[str] | None = None) -> int:
    """Start a detached daemon for `name`; returns its pid once it listens.

    Raises ServerAlreadyRunning if another daemon owns the name, or MuxdError with the daemon's
    own words when it fails to start.
    """
    ensure_socket_dir()
    read_fd, write_fd = os.pipe()
    with open(log_path(name), "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "muxd.daemon.main", "--name", name, "--ready-fd", str(write_fd),
             *(extra_args or [])],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            pass_fds=(write_fd,), start_new_session=True, close_fds=True,
        )
    os.close(write_fd)
    try:
        line = _read_line(read_fd, timeout_s)
    finally:
        os.close(read_fd)
    if line == "ready":
        return process.pid
    if line.startswith("error "):
        _, code, message = (line.split(" ", 2) + [""])[:3]
        raise error_from_code(code, message)
    if line == "" and process.poll() is None:
        process.kill()
        raise Timeout(f"the muxd server did not start within {timeout_s:.0f}s")
    raise MuxdError(f"the muxd server failed to start: {_log_tail(name) or 'no log'}")


def _read_line(fd: int, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace").strip()


async def connect(name: str = DEFAULT_SERVER_NAME, *, start: bool = True,
                  client_name: str = "muxd-cli", token: str | None = None) -> Client:
    """A greeted client of server `name` (as `token`'s principal, if given), starting the server
    first if `start` and none runs."""
    path = socket_path(name)
    try:
        return await Client.connect(path, client_name=client_name, token=token)
    except ServerNotRunning:
        if not start:
            raise
    try:
        await asyncio.to_thread(start_server, name)
    except MuxdError as exc:
        if exc.code != "server_running":  # lost a race with another starter: just connect
            raise
    return await Client.connect(path, client_name=client_name, token=token)
