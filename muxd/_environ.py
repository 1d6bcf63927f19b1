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


# The event's variables (#{hook}, #{hook_pane}…) for the commands of a hook, which run in
# processes of their own (daemon/attention/hooks_runner.py): a JSON object of strings.
HOOK_VARIABLES_ENV = "MUXD_HOOK_VARIABLES"


def hook_variables_from_env() -> dict[str, str]:
    """The variables of the event whose hook runs this process's command (none elsewhere): as
    in tmux, every command of a hook sees #{hook_pane} and its kin."""
    text = getenv(HOOK_VARIABLES_ENV)
    if not text:
        return {}
    import json  # only in a hook's commands

    try:
        values = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(values, dict):
        return {}
    return {k: v for k, v in values.items() if isinstance(k, str) and k.startswith("hook") and isinstance(v, str)}
