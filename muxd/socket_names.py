"""Where the socket of a server named NAME is, as text, and the check that its directory is
private: what paths.py says with Paths, in the few lines a tmux shim call needs. The shim runs
once per command a tool sends (cli/tmux_fast_path.py), so this imports neither pathlib nor re
(each costs about a third of the interpreter's own start).
"""

from __future__ import annotations

import os
import stat

from muxd.errors import BadRequest, Forbidden

DEFAULT_SERVER_NAME = "default"
SERVER_NAME_MAX_CHARS = 64
SOCKET_DIR_MODE = 0o700
SOCKET_DIR_REMEDY = "choose another MUXD_SOCKET_DIR"  # what to do about a socket directory refused
_SERVER_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@+-")
# Bits that let someone else create, rename or remove entries in a directory.
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def socket_dir_text() -> str:
    """`$MUXD_SOCKET_DIR`, else `/tmp/muxd-$UID` (paths.socket_dir says why only that variable),
    written as paths.socket_dir writes it."""
    return plain_path(os.environ.get("MUXD_SOCKET_DIR") or f"/tmp/muxd-{os.getuid()}")


def plain_path(text: str) -> str:
    """`text` as str(Path(text)) writes it (no empty or `.` parts), which is how a daemon names
    its socket in $TMUX; pathlib is imported only for a path that needs it."""
    parts = text.split("/")
    if "" in parts[1:] or "." in parts or not text:
        from pathlib import PurePath

        return str(PurePath(text))
    return text


def check_server_name(name: str) -> str:
    """`name`, if it can name a server (letters, digits, _.@+-, not starting with a dot)."""
    if name.startswith(".") or not 0 < len(name) <= SERVER_NAME_MAX_CHARS or not _SERVER_NAME_CHARS.issuperset(name):
        raise BadRequest(f"invalid server name {name!r}: use letters, digits and _.@+- only")
    return name


def socket_file(name: str = DEFAULT_SERVER_NAME) -> str:
    return os.path.join(socket_dir_text(), f"{check_server_name(name)}.sock")


def ensure_private_dir(path: str, remedy: str) -> None:
    """Create directory `path` 0700 (its parents as mkdir -p does), or refuse one that others
    could reach into (`remedy`: what to do then)."""
    os.makedirs(path, mode=SOCKET_DIR_MODE, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise Forbidden(f"{path} is not a directory")
    if info.st_uid != os.getuid():
        raise Forbidden(f"{path} belongs to uid {info.st_uid}, not to you")
    mode = stat.S_IMODE(info.st_mode)
    if mode & _OTHERS_WRITE:
        raise Forbidden(f"{path} is writable by others (mode {mode:04o}): muxd keeps its socket only in a "
                        f"private directory (mode 0700); {remedy}", path=path)
    if mode & 0o077:  # readable or searchable by others: nothing planted, just tighten it
        os.chmod(path, SOCKET_DIR_MODE)
