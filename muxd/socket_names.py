"""Where the socket of a server named NAME is, as text, and the check that its directory is
private: what paths.py says with Paths, in the few lines a tmux shim call needs. The shim runs
once per command a tool sends (cli/tmux_fast_path.py), so this imports neither pathlib nor re
(each costs about a third of the interpreter's own start).
"""

from __future__ import annotations

import posix  # os's calls without os (~1.4 ms of a shim call to import: muxd/_environ.py)
# stat's C half, which stat.py only re-exports: one module less to load per shim call.
import _stat as stat

from muxd._environ import getenv
from muxd.errors import BadRequest, Forbidden

DEFAULT_SERVER_NAME = "default"
CONFIG_ENV = "MUXD_CONFIG"  # set by `muxd -f FILE`; the server started then reads FILE
CLIENT_NAME_ENV = "MUXD_CLIENT_NAME"  # how the one-shot CLI greets the server (default muxd-cli)
HOST_URL_ENV = "MUXD_HOST_URL"  # a server on another host, as `muxd -H ssh://user@host` names it
REMOTE_SCHEME = "ssh://"  # an address that names such a server (client/remote.py), not a socket's path
PROXY_READY = b"ready"  # what `muxd proxy` says in a line once it reaches the server: the rest is the server's
SERVER_NAME_MAX_CHARS = 64
SOCKET_DIR_MODE = 0o700
SOCKET_DIR_REMEDY = "choose another MUXD_SOCKET_DIR"  # what to do about a socket directory refused
_SERVER_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@+-")
# Bits that let someone else create, rename or remove entries in a directory.
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def socket_dir_text() -> str:
    """`$MUXD_SOCKET_DIR`, else `/tmp/muxd-$UID` (paths.socket_dir says why only that variable),
    written as paths.socket_dir writes it."""
    return plain_path(getenv("MUXD_SOCKET_DIR") or f"/tmp/muxd-{posix.getuid()}")


def plain_path(text: str) -> str:
    """`text` as str(Path(text)) writes it (no empty or `.` parts), which is how a daemon names
    its socket in $TMUX; pathlib is imported only for a path that needs it."""
    parts = text.split("/")
    if "" in parts[1:] or "." in parts or not text:
        from pathlib import PurePath

        return str(PurePath(text))
    return text


def split_path(path: str) -> tuple[str, str]:
    """os.path.split(path): its directory and its last part, by posixpath's rules."""
    at = path.rfind("/") + 1
    head, tail = path[:at], path[at:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def check_server_name(name: str) -> str:
    """`name`, if it can name a server (letters, digits, _.@+-, not starting with a dot)."""
    if name.startswith(".") or not 0 < len(name) <= SERVER_NAME_MAX_CHARS or not _SERVER_NAME_CHARS.issuperset(name):
        raise BadRequest(f"invalid server name {name!r}: use letters, digits and _.@+- only")
    return name


def socket_file(name: str = DEFAULT_SERVER_NAME) -> str:
    directory, file = socket_dir_text(), f"{check_server_name(name)}.sock"  # os.path.join's
    return directory + file if not directory or directory.endswith("/") else f"{directory}/{file}"


def ensure_private_dir(path: str, remedy: str) -> None:
    """Create directory `path` 0700 (its parents as mkdir -p does), or refuse one that others
    could reach into (`remedy`: what to do then)."""
    _make_dirs(path)
    info = posix.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise Forbidden(f"{path} is not a directory")
    if info.st_uid != posix.getuid():
        raise Forbidden(f"{path} belongs to uid {info.st_uid}, not to you")
    mode = stat.S_IMODE(info.st_mode)
    if mode & _OTHERS_WRITE:
        raise Forbidden(f"{path} is writable by others (mode {mode:04o}): muxd keeps its socket only in a "
                        f"private directory (mode 0700); {remedy}", path=path)
    if mode & 0o077:  # readable or searchable by others: nothing planted, just tighten it
        posix.chmod(path, SOCKET_DIR_MODE)


def _make_dirs(path: str) -> None:
    """os.makedirs(path, SOCKET_DIR_MODE, exist_ok=True), os imported only to make parents."""
    try:
        posix.mkdir(path, SOCKET_DIR_MODE)
    except FileNotFoundError:  # a parent is missing (or `path` is empty): makedirs says which
        import os

        os.makedirs(path, mode=SOCKET_DIR_MODE, exist_ok=True)
    except OSError:
        try:
            is_dir = stat.S_ISDIR(posix.stat(path).st_mode)
        except (OSError, ValueError):
            is_dir = False
        if not is_dir:  # as makedirs: something else is there, or it cannot be made
            raise
