"""Where a server's database lives: `$MUXD_DB`, else `$XDG_STATE_HOME/muxd/<server>.db`."""

from __future__ import annotations

import os

from muxd.paths import state_dir

ENV_DB = "MUXD_DB"
MEMORY = ":memory:"


def db_path(server_name: str, env: dict[str, str] | None = None) -> str:
    """The database of server `server_name`: a file path, or ":memory:" when MUXD_DB says so."""
    env = dict(os.environ) if env is None else env
    override = env.get(ENV_DB)
    if override:
        return override if override == MEMORY else os.path.expanduser(override)
    return str(state_dir() / f"{server_name}.db")
