"""`open_database`: a file path opens SQLite, a postgresql:// URL opens the PostgreSQL server (a
private cluster here) behind the same calls, and a URL without the driver installed is one line
saying what to install, its password never shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from muxd.store.database import Database
from muxd.store.location import redacted
from muxd.store.opening import POSTGRES_EXTRA, open_database
from muxd.store.pg_schema import PG_MIGRATIONS, schema_version
from muxd.store.schema import MIGRATIONS


def test_a_path_opens_sqlite(tmp_path: Path) -> None:
    db = open_database(str(tmp_path / "s.db"))
    try:
        assert type(db) is Database
        assert db.call_sync(lambda c: c.execute("PRAGMA user_version").fetchone()) == (len(MIGRATIONS),)
    finally:
        db.close()


def test_a_url_opens_postgresql_behind_the_same_calls(postgres_url: str) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
    db = open_database(postgres_url, busy_timeout_s=2.0)
    try:
        assert isinstance(db, Database) and db.path == postgres_url
        assert db.call_sync(schema_version) == len(PG_MIGRATIONS)
    finally:
        db.close()


def test_a_url_without_the_driver_says_what_to_install() -> None:
    url = "postgresql://muxd:s3cret@/fleet?host=/nowhere"
    # The interpreter as a user without the extra has it: psycopg cannot be imported.
    script = ("import sys; sys.modules['psycopg'] = None\n"
              "from muxd.errors import StoreUnavailable\n"
              "from muxd.store.opening import open_database\n"
              "try:\n"
              f"    open_database({url!r})\n"
              "except StoreUnavailable as exc:\n"
              "    print(exc.detail['reason'], exc.message)\n")
    said = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert said.strip() == (f"cant_open the database {redacted(url)} is PostgreSQL's, and its driver is not "
                            f"installed: {POSTGRES_EXTRA}")
    assert "s3cret" not in said and redacted(url) == "postgresql://muxd:***@/fleet?host=/nowhere"
