"""Where muxd keeps its sockets, locks and logs, and the checks that keep them private.

The socket and the lock live in the socket directory (under /tmp, wiped at reboot, as tmux's);
the daemon's log lives in the state directory with the database, so that what a server said
before it died is still there after a reboot or a logout that cleaned /tmp.

The socket directory must be ours and writable by nobody else: a directory others can write
to (`/tmp` itself, a sticky 1777 one) lets them plant a symlink or a hard link where the lock
or the log will be opened, and the daemon would then truncate or append to the file it points
at. Such a directory is refused, as tmux refuses one with unsafe permissions, and the files in
it are opened without following links and only if they are plain files of ours.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from muxd.errors import Forbidden
# The server's name and socket directory as text (socket_names.py): what the tmux shim's fast path reads.
from muxd.socket_names import (CLIENT_NAME_ENV, CONFIG_ENV, DEFAULT_SERVER_NAME, SOCKET_DIR_REMEDY,  # noqa: F401
                                check_server_name, ensure_private_dir, socket_dir_text)

PRIVATE_FILE_MODE = 0o600


def socket_dir() -> Path:
    """`$MUXD_SOCKET_DIR`, else `/tmp/muxd-$UID` (as tmux: `$TMUX_TMPDIR`, else `/tmp/tmux-$UID`).

    Only muxd's own variable moves it: a program started by an MCP client that passes no
    environment (the Inspector, unless given -e) must find the same server as the user's shell,
    so no other variable, such as $XDG_RUNTIME_DIR, may decide where it is."""
    return Path(socket_dir_text())


def state_dir() -> Path:
    """`$XDG_STATE_HOME/muxd`, else `~/.local/state/muxd`: what outlives a reboot (log, database)."""
    base = os.environ.get("XDG_STATE_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "muxd"


CACHE_DIR_ENV = "MUXD_CACHE_DIR"


def cache_dir() -> Path:
    """`$MUXD_CACHE_DIR`, else `$XDG_CACHE_HOME/muxd`, else `~/.cache/muxd`: what muxd can rebuild
    at will (the native emulator's pre-parsed C declarations, emulator/ghostty_ffi.py)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "muxd"


def ensure_cache_dir() -> Path:
    """Create the cache directory 0700, or refuse one that others could reach into: muxd runs
    code it finds there, so only a directory nobody else can write to will do."""
    return _ensure_private_dir(cache_dir(), "choose another XDG_CACHE_HOME")


def ensure_socket_dir(path: Path | None = None) -> Path:
    """Create the socket directory 0700, or refuse one that others could reach into."""
    return _ensure_private_dir(path or socket_dir(), SOCKET_DIR_REMEDY)


def ensure_state_dir() -> Path:
    """Create the state directory 0700 (its parents as mkdir -p does), or refuse one that others
    could reach into, as the socket directory."""
    return _ensure_private_dir(state_dir(), "choose another XDG_STATE_HOME")


def _ensure_private_dir(path: Path, remedy: str) -> Path:
    ensure_private_dir(str(path), remedy)
    return path


def open_private(path: Path, flags: int) -> int:
    """An fd of `path` (created 0600 if missing) that is sure to be a plain file of ours.

    Never follows a symlink, and refuses a file that is another's or has other names (a hard
    link planted to a file elsewhere); an existing file readable by others is made 0600."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    except OSError as exc:
        if os.path.islink(path):
            raise Forbidden(f"{path} is a symbolic link: refusing to open it", path=str(path)) from exc
        raise Forbidden(f"cannot open {path}: {exc.strerror or exc}", path=str(path)) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Forbidden(f"{path} is not a plain file: refusing to use it", path=str(path))
        if info.st_uid != os.getuid():
            raise Forbidden(f"{path} belongs to uid {info.st_uid}, not to you", path=str(path))
        if info.st_nlink != 1:
            raise Forbidden(f"{path} has {info.st_nlink} names (a hard link): refusing to use it", path=str(path))
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def socket_path(name: str = DEFAULT_SERVER_NAME) -> Path:
    return socket_dir() / f"{check_server_name(name)}.sock"


def lock_path(name: str = DEFAULT_SERVER_NAME) -> Path:
    return socket_dir() / f"{check_server_name(name)}.lock"


def log_path(name: str = DEFAULT_SERVER_NAME) -> Path:
    """The daemon's log: in the state directory, which a reboot does not wipe (ensure_state_dir)."""
    return state_dir() / f"{check_server_name(name)}.log"




def agents_dir() -> Path:
    """`$XDG_CONFIG_HOME/muxd/agents` (else `~/.config/muxd/agents`): the user's agent manifests
    (`*.toml`, muxd/detectors/manifest.py), read with muxd's own when a server loads its detectors."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "muxd" / "agents"


def config_file() -> tuple[Path, bool]:
    """The config file the server loads at start, and whether it was chosen (`muxd -f FILE`: a
    missing one is then an error) rather than the default `$XDG_CONFIG_HOME/muxd/muxd.conf`
    (else `~/.config/muxd/muxd.conf`), which may well not exist."""
    chosen = os.environ.get(CONFIG_ENV)
    if chosen:
        return Path(chosen), True
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "muxd" / "muxd.conf", False
