"""Opening a session log on a pane's behalf. The pane's environment and cwd say where the log
is, so the file may be anything the pane made: a FIFO that blocks `open()` until someone
writes, a symbolic or hard link to a private file, another user's file. A log is opened
without blocking, as a regular file of the agent's own user with no other name, and the CLI's
own directories below its home (`projects/<slug>/`, `sessions/YYYY/MM/DD/`, …) are walked one
at a time (openat) without following links.

The home itself (`$CLAUDE_CONFIG_DIR`, `~/.codex`, the cwd, …) is taken as named, links
followed: whoever sets a pane's environment can name any directory directly, so a link there
reaches nothing new, while people often link `~/.claude` into a dotfiles checkout. Below it
the names are the CLI's, and a link is the only way to point them elsewhere."""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Directories are opened only to walk through (O_PATH needs no read permission, as a lookup).
_DIRECTORY = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class RefusedLog(OSError):
    """A file where a log was looked for that muxd will not read (its message says why)."""


def open_log(path: Path, *, owner_uid: int, layout_parts: int) -> int:
    """A read-only fd of the regular file at `path` owned by `owner_uid` with one name; no link
    is followed in the last `layout_parts` components of the path (the file and the CLI's own
    directories). Raises OSError (RefusedLog for a file that is there but not a log)."""
    parts = Path(os.path.normpath(path)).parts
    if not path.is_absolute() or len(parts) < 2:
        raise RefusedLog(f"{path}: not an absolute path to a file")
    keep = max(1, len(parts) - layout_parts)
    directory = os.open(Path(*parts[:keep]), _DIRECTORY)
    try:
        for name in parts[keep:-1]:
            inner = _open_below(directory, name, _DIRECTORY | os.O_NOFOLLOW, path)
            os.close(directory)
            directory = inner
        fd = _open_below(directory, parts[-1], _FILE, path)
    finally:
        os.close(directory)
    try:
        _check(fd, path, owner_uid)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_below(directory: int, name: str, flags: int, path: Path) -> int:
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        if stat.S_ISLNK(_lstat_mode(directory, name)):
            raise RefusedLog(f"{path}: {name} is a symbolic link") from exc
        raise


def _lstat_mode(directory: int, name: str) -> int:
    try:
        return os.lstat(name, dir_fd=directory).st_mode
    except OSError:
        return 0


def _check(fd: int, path: Path, owner_uid: int) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise RefusedLog(f"{path}: not a regular file")
    if info.st_uid != owner_uid:
        raise RefusedLog(f"{path}: belongs to uid {info.st_uid}, not to the agent's {owner_uid}")
    if info.st_nlink != 1:
        raise RefusedLog(f"{path}: has {info.st_nlink} names (a hard link)")


def read_at(fd: int, start: int, size: int) -> bytes:
    """Up to `size` bytes of `fd` from `start` (fewer at its end)."""
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.pread(fd, size, start)
        if not chunk:
            break
        chunks.append(chunk)
        start, size = start + len(chunk), size - len(chunk)
    return b"".join(chunks)


def read_head(path: Path, max_bytes: int, *, owner_uid: int, layout_parts: int) -> bytes | None:
    """The first `max_bytes` of the log at `path`, opened as `open_log` does; None if it is not one."""
    try:
        fd = open_log(path, owner_uid=owner_uid, layout_parts=layout_parts)
    except OSError:
        return None
    try:
        return read_at(fd, 0, max_bytes)
    except OSError:
        return None
    finally:
        os.close(fd)
