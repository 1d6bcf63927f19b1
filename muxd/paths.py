"""Where muxd keeps its sockets, locks and logs, and the checks that keep them private."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from muxd.errors import BadRequest, Forbidden

DEFAULT_SERVER_NAME = "default"
SOCKET_DIR_MODE = 0o700
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_.@+-]{1,64}$")


def socket_dir() -> Path:
    """`$MUXD_SOCKET_DIR`, else `$XDG_RUNTIME_DIR/muxd`, else `/tmp/muxd-$UID`."""
    override = os.environ.get("MUXD_SOCKET_DIR")
    if override:
        return Path(override)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "muxd"
    return Path(f"/tmp/muxd-{os.getuid()}")


def check_server_name(name: str) -> str:
    if name.startswith(".") or not _SERVER_NAME.match(name):
        raise BadRequest(f"invalid server name {name!r}: use letters, digits and _.@+- only")
    return name


def ensure_socket_dir(path: Path | None = None) -> Path:
    """Create the socket directory 0700, or refuse one that others could reach into."""
    path = path or socket_dir()
    path.mkdir(mode=SOCKET_DIR_MODE, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise Forbidden(f"{path} is not a directory")
    if info.st_uid != os.getuid():
        raise Forbidden(f"{path} belongs to uid {info.st_uid}, not to you")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, SOCKET_DIR_MODE)
    return path


def socket_path(name: str = DEFAULT_SERVER_NAME) -> Path:
    return socket_dir() / f"{check_server_name(name)}.sock"


def lock_path(name: str = DEFAULT_SERVER_NAME) -> Path:
    return socket_dir() / f"{check_server_name(name)}.lock"


def log_path(name: str = DEFAULT_SERVER_NAME) -> Path:
    return socket_dir() / f"{check_server_name(name)}.log"
