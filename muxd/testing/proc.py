"""Readings of a live process from /proc, for tests and scripts that bound a daemon's memory."""

from __future__ import annotations

import re
from collections import Counter

TRACEBACK_MARK = "Traceback (most recent call last)"


def _status_kib(pid: int, name: str) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {name} for pid {pid}")


def rss_kib(pid: int) -> int:
    """Resident set size of `pid` now, in KiB."""
    return _status_kib(pid, "VmRSS")


def peak_rss_kib(pid: int) -> int:
    """The most `pid` has ever held resident (VmHWM), in KiB."""
    return _status_kib(pid, "VmHWM")


def tracebacks_in(log_text: str) -> int:
    return log_text.count(TRACEBACK_MARK)


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$", re.M)


def traceback_causes(log_text: str) -> Counter[str]:
    """The exception lines ending the tracebacks of a log, counted (cut to 120 characters)."""
    return Counter(line[:120] for line in _EXCEPTION_LINE.findall(log_text))


def open_terminals(pid: int) -> set[str]:
    """The terminal devices (/dev/pts/N) `pid` holds open: a daemon writing to an attached
    client's terminal holds that client's."""
    import os

    found = set()
    fd_dir = f"/proc/{pid}/fd"
    for name in os.listdir(fd_dir):
        try:
            target = os.readlink(f"{fd_dir}/{name}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("/dev/pts/"):
            found.add(target)
    return found


ANONYMOUS = "anonymous: Python's heap, malloc, stacks"
_SITE_PACKAGES = "/site-packages/"


def _mapping_group(path: str) -> str:
    """What a mapping of /proc/PID/smaps counts under: an installed package's name, the Python
    interpreter (with its own C modules), a shared library's file name, or ANONYMOUS."""
    if not path or path in ("[heap]", "[stack]"):
        return ANONYMOUS
    if _SITE_PACKAGES in path:
        return path.split(_SITE_PACKAGES, 1)[1].split("/", 1)[0].split(".cpython-", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if "/lib-dynload/" in path or name.startswith(("python3", "libpython3")):
        return "python (interpreter, its C modules)"
    return name.split(".so", 1)[0] if ".so" in name else name


def rss_by_mapping(pid: int) -> dict[str, int]:
    """`pid`'s resident KiB by what holds them (_mapping_group), largest first."""
    groups: dict[str, int] = {}
    group = ANONYMOUS
    with open(f"/proc/{pid}/smaps") as fh:
        for line in fh:
            head = line.split(None, 5)
            if "-" in head[0] and not head[0].endswith(":"):  # a mapping: range perms offset dev inode [path]
                group = _mapping_group(head[5].strip() if len(head) > 5 else "")
            elif head[0] == "Rss:":
                groups[group] = groups.get(group, 0) + int(head[1])
    return dict(sorted(groups.items(), key=lambda item: -item[1]))
