"""Argument bytes that are not UTF-8 (the shell's $'caf\\xe9'), on the wire and into a request.

Python reads such argv bytes as surrogate escapes, which msgpack's str cannot hold. The
one-shot client sends them as an ext value of their bytes; the daemon takes them back as the
same surrogate-escaped str, which Python's os functions turn back into the bytes (a cwd, an
argv, an environment) and send-keys and paste write as bytes. They are taken only where tmux
passes bytes through (PASS_THROUGH); a name, a title or a search must be text: NotUtf8, one line.
"""

from __future__ import annotations

from typing import Any

from muxd.errors import NotUtf8

OS_BYTES_EXT = 1  # the msgpack ext type of argument bytes that are not UTF-8

# Where a request may hold them: (request type, field, inner field…), a prefix of the value's path.
PASS_THROUGH: frozenset[tuple[str, ...]] = frozenset({
    ("send-keys", "keys"),
    ("set-buffer", "text"),
    *((kind, "spawn", field) for kind in ("new-session", "new-window", "split-window", "respawn-pane")
      for field in ("command", "cwd", "env")),
})


class OsBytes(str):
    """A string that came as OS bytes (surrogate escapes where they are not UTF-8)."""

    __slots__ = ()


def os_bytes_ext(code: int, data: memoryview) -> Any:
    """msgspec's ext_hook: OS bytes back to their surrogate-escaped str."""
    if code != OS_BYTES_EXT:
        raise ValueError(f"unknown msgpack extension type {code}")
    return OsBytes(bytes(data).decode("utf-8", "surrogateescape"))


def refuse_os_bytes_outside_pass_through(message: dict[str, Any]) -> None:
    """NotUtf8 for the first OS bytes in `message` (a decoded request) outside PASS_THROUGH."""
    kind = message.get("type")
    for field, value in message.items():
        _check(value, (str(kind), str(field)))


def _check(value: Any, path: tuple[str, ...]) -> None:
    if any(path[:len(allowed)] == allowed for allowed in PASS_THROUGH):
        return
    if isinstance(value, OsBytes):
        raise NotUtf8(value, path[-1])
    if isinstance(value, list):
        for item in value:
            _check(item, path)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, path)
            _check(item, (*path, str(key)))
