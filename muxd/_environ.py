"""The environment's variables as text, without importing os: a tmux shim call's interpreter
starts without `site` (cli/tmux_fast_path.py), so without os, which would cost it ~1.4 ms (its
_collections_abc, stat and posixpath) for the few variables it reads."""

from __future__ import annotations

import posix
import sys

# os.environ's own coding of names and values (os.fsencode / os.fsdecode).
_ENCODING = sys.getfilesystemencoding()


def getenv(name: str) -> str | None:
    """os.environ.get(name). Once os is loaded its environ is read: it holds the changes made
    through it, which posix.environ (the environment the process started with) does not."""
    os = sys.modules.get("os")
    if os is not None:
        return os.environ.get(name)  # type: ignore[no-any-return]
    value = posix.environ.get(name.encode(_ENCODING, "surrogateescape"))
    return None if value is None else value.decode(_ENCODING, "surrogateescape")
