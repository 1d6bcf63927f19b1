"""Fixtures shared by the test files (the muxd pytest plugin gives `muxd_server`)."""

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from muxd.store.database import ENV_BUSY_TIMEOUT, migrate
from muxd.store.hosts import host_from_env, use_host
from muxd.store.pg_connection import PgConnection
from muxd.store.pg_connection import connect as pg_connect
from muxd.store.pg_schema import migrate as pg_migrate
from muxd.testing.postgres import PostgresCluster
from muxd.testing.fake_models.agent_pane import PANE_HEIGHT, PANE_WIDTH
from muxd.testing.server import MuxdTestServer, host_server

# The tests that hold the daemon's database from another process: each write the daemon tries
# waits this long for it, not the user's 5 s (config.DB_BUSY_TIMEOUT_S), and fails the same way.
HELD_DB_BUSY_TIMEOUT_S = 1.0


@pytest.fixture
def pane_size() -> tuple[int, int]:
    """Columns and rows of a real agent's pane; tests that run at several sizes parametrize it."""
    return (PANE_WIDTH, PANE_HEIGHT)


C = TypeVar("C", sqlite3.Connection, PgConnection)


def _migrated_connections(open_one: Callable[[], C], migrate_first: Callable[[C], int]) -> Iterator[Callable[..., C]]:
    """A fixture's opener of connections to one database, migrated by the first one opened;
    every one is closed when the fixture ends. A connection writes its rows as this machine's
    (MUXD_HOST, else the hostname), or as `connect(host=…)`'s: two of them stand for two hosts."""
    opened: list[C] = []

    def connect(host: str | None = None) -> C:
        db = open_one()
        use_host(db, host_from_env(os.environ) if host is None else host)
        if not opened:
            migrate_first(db)
        opened.append(db)
        return db

    yield connect
    for db in opened:
        db.close()


@pytest.fixture
def connect_sqlite(tmp_path: Path) -> Iterator[Callable[..., sqlite3.Connection]]:
    """Opens connections to one migrated SQLite file, set up as the daemon's writer sets its own
    (autocommit, WAL); every one is closed at the end of the test."""
    path = tmp_path / "store.db"

    def open_one() -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        return db

    yield from _migrated_connections(open_one, migrate)


@pytest.fixture(scope="session")
def migrated_pg_template(postgres_cluster: PostgresCluster) -> str:
    """A database of the session's cluster with muxd's schema, that tests' databases copy: a copy
    costs less than migrating each anew."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
    name = postgres_cluster.create_database()
    db = pg_connect(postgres_cluster.url(name))
    try:
        use_host(db, host_from_env(os.environ))
        pg_migrate(db)
    finally:
        db.close()
    return name


@pytest.fixture
def connect_pg(postgres_cluster: PostgresCluster, migrated_pg_template: str) -> Iterator[Callable[..., PgConnection]]:
    """Opens connections to one migrated PostgreSQL database of the private cluster, new for the
    test (as `connect_store` does for SQLite); every one is closed and the database dropped after.
    They take the caller's clock, as SQLite's do (the store's tests pin the time); a test of the
    database's clock sets `database_clock` on its own (database.judged_now)."""
    name = postgres_cluster.create_database(template=migrated_pg_template)

    def open_one() -> PgConnection:
        db = pg_connect(postgres_cluster.url(name))
        db.database_clock = False
        return db

    try:
        yield from _migrated_connections(open_one, pg_migrate)
    finally:
        postgres_cluster.drop_database(name)


@pytest.fixture
def connect_store(connect_sqlite: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
    """The store's connections: SQLite's (a module whose tables PostgreSQL has too may make this
    `connect_either`)."""
    return connect_sqlite


@pytest.fixture(params=["sqlite", "postgresql"])
def connect_either(request: pytest.FixtureRequest,
                   connect_sqlite: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
    """`connect_sqlite`, then `connect_pg`: a test of the store on each database (issue 30); a
    PgConnection stands for sqlite3's there."""
    if request.param == "sqlite":
        return connect_sqlite
    return request.getfixturevalue("connect_pg")  # type: ignore[no-any-return]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a test's database is, as MUXD_DB says it: a SQLite file, then a PostgreSQL database of
    the private cluster (a copy of one migrated already; dropped after), for open_database."""
    if request.param == "sqlite":
        yield str(tmp_path / "store.db")
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    name = cluster.create_database(template=request.getfixturevalue("migrated_pg_template"))
    try:
        yield cluster.url(name)
    finally:
        cluster.drop_database(name)


@pytest.fixture
def store(connect_store: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
    """One connection to a fresh migrated store (task queue, knowledge, quotas)."""
    return connect_store()


@pytest.fixture
def held_db_server() -> Iterator[MuxdTestServer]:
    """A running daemon (as `muxd_server`) whose writes wait HELD_DB_BUSY_TIMEOUT_S for a
    database another process holds."""
    server = MuxdTestServer(env={ENV_BUSY_TIMEOUT: str(HELD_DB_BUSY_TIMEOUT_S)}).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def alpha(postgres_url: str) -> Iterator[MuxdTestServer]:
    """Host alpha's daemon on the test's PostgreSQL database (a fleet of two with `beta`)."""
    server = host_server(postgres_url, "alpha").start()
    yield server
    server.stop()


@pytest.fixture
def beta(postgres_url: str) -> Iterator[MuxdTestServer]:
    """Host beta's daemon on the test's PostgreSQL database."""
    server = host_server(postgres_url, "beta").start()
    yield server
    server.stop()


@pytest.fixture
def local_zone() -> Iterator[Callable[[str], None]]:
    """`local_zone("America/New_York")` makes that the process's local time zone (TZ, tzset)
    for the rest of the test; the zone before is put back after it."""
    saved = os.environ.get("TZ")

    def use(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield use
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


AGENT_MISSING = re.compile(r"\b(claude|codex|gemini|aider|opencode|qwen|pi|cline|kilo) not installed\b")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say once, without -rs, why the real-agent tests skipped and what installs the CLIs."""
    agents: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        found = AGENT_MISSING.search(reason)
        if found:
            agents[found.group(1)] = agents.get(found.group(1), 0) + 1
    if agents:
        names = ", ".join(sorted(agents))
        terminalreporter.write_line(f"{sum(agents.values())} tests skipped: agent CLIs not installed ({names}); "
                                    "`bash .ci/install-agents` installs them into .agents/")
