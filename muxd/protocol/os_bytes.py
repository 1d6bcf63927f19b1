"""Argument bytes that are not UTF-8 (the shell's $'caf\\xe9'), on the wire and into a request.

Python reads such argv bytes as surrogate escapes, which msgpack's str cannot hold. The
one-shot client sends them as an ext value of their bytes; the daemon takes them back as the
same surrogate-escaped str, which Python's os functions turn back into the bytes (a cwd, an
argv, an environment) and send-keys and paste write as bytes. They are taken only where tmux
passes bytes through (PASS_THROUGH); a name, a title or a search must be text: NotUtf8, one line.
"""

from __future__ import annotations

from muxd.errors import NotUtf8

TYPE_CHECKING = False  # typing (~2 ms to import) only for the type checker: the one-shot CLI imports this
if TYPE_CHECKING:
    from typing import Any

OS_BYTES_EXT = 1  # the msgpack ext type of argument bytes that are not UTF-8

# Where a request may hold them: (request type, field, inner field…), a prefix of the value's path.
PASS_THROUGH: frozenset[tuple[str, ...]] = frozenset({
    ("send-keys", "keys"),
    ("set-buffer", "text"),
    ("run", "cwd"),  # not its command: an execution's is kept in the history, which holds text
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


def taken_os_bytes(message: dict[str, Any]) -> dict[str, Any]:
    """`message` (a decoded request) with its OS bytes as plain str (msgspec encodes no str
    subclass: a reply naming them must encode); NotUtf8 for the first one outside PASS_THROUGH."""
    kind = str(message.get("type"))
    return {field: _taken(value, (kind, str(field))) for field, value in message.items()}


def _taken(value: Any, path: tuple[str, ...]) -> Any:
    if isinstance(value, OsBytes):
        if not any(path[:len(allowed)] == allowed for allowed in PASS_THROUGH):
            raise NotUtf8(value, path[-1])
        return str(value)
    if isinstance(value, list):
        return [_taken(item, path) for item in value]
    if isinstance(value, dict):
        return {_taken(key, (*path, str(key))): _taken(item, (*path, str(key))) for key, item in value.items()}
    return value
