"""`open_database(location)`: the server's database, SQLite's file or PostgreSQL's server as
`location` (store/location.py's `db_path`) says, both behind `Database`'s calls. PostgreSQL's
driver is imported only for a URL, so a SQLite start never pays for it."""

from __future__ import annotations

from muxd.config import DB_BUSY_TIMEOUT_S
from muxd.errors import StoreUnavailable
from muxd.store.database import Database
from muxd.store.location import is_database_url, redacted

POSTGRES_EXTRA = "pip install 'muxd[postgres]'"


def open_database(location: str, *, busy_timeout_s: float = DB_BUSY_TIMEOUT_S, host: str | None = None) -> Database:
    """The opened, migrated database at `location`, writing rows as `host`'s (None: $MUXD_HOST's,
    store/hosts.py); StoreUnavailable when it cannot be used (for a URL also when the PostgreSQL
    driver is not installed), BadRequest for a host that cannot be one."""
    if not is_database_url(location):
        return Database(location, busy_timeout_s=busy_timeout_s, host=host)
    try:
        from muxd.store.pg_database import PgDatabase
    except ImportError as exc:
        if not (exc.name or "").startswith("psycopg"):
            raise
        raise StoreUnavailable(f"the database {redacted(location)} is PostgreSQL's, and its driver is not "
                               f"installed: {POSTGRES_EXTRA}", reason="cant_open",
                               path=redacted(location)) from exc
    return PgDatabase(location, busy_timeout_s=busy_timeout_s, host=host)
