"""Where a server's database lives: `$MUXD_DB`, else `$XDG_STATE_HOME/muxd/<server>.db`. `$MUXD_DB`
may be a PostgreSQL URL (postgresql://…, the fleet's shared store, issue 30), kept as it is."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from muxd.paths import state_dir

ENV_DB = "MUXD_DB"
MEMORY = ":memory:"
DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")  # libpq's two spellings


def is_database_url(location: str) -> bool:
    """Whether `location` names a PostgreSQL database (a URL) rather than a SQLite file."""
    return location.startswith(DATABASE_URL_SCHEMES)


def redacted(url: str) -> str:
    """`url` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def db_path(server_name: str, env: dict[str, str] | None = None) -> str:
    """The database of server `server_name`: a file path, a PostgreSQL URL or ":memory:" when
    MUXD_DB says so."""
    env = dict(os.environ) if env is None else env
    override = env.get(ENV_DB)
    if override:
        return override if override == MEMORY or is_database_url(override) else os.path.expanduser(override)
    return str(state_dir() / f"{server_name}.db")
