"""`PgDatabase` against a private PostgreSQL cluster: the same calls as SQLite's `Database` run the
store's own jobs (the task queue) on it, failures are one typed line with the reasons SQLite's
have (and `unreachable`), a conflict the server rolled back is run once more, the server going
away fails the calls that need it and its return needs no restart, and a URL's password is never
shown."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from muxd.daemon.access.control import AccessControl
from muxd.errors import Internal, StoreUnavailable, Unauthorized
from muxd.store import task_store
from muxd.store.hosts import pane_principal
from muxd.store.pg_connection import PgConnection
from muxd.store.pg_schema import PG_MIGRATIONS, schema_version
from muxd.tasks.model import Verification
from muxd.testing.postgres import PostgresCluster

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
from muxd.store.pg_database import PgDatabase  # noqa: E402 - needs psycopg

NOW = 1_700_000_000.0
SERIALIZATION_FAILURE = "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$"


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[PgDatabase]:
    db = PgDatabase(postgres_url, busy_timeout_s=2.0)
    yield db
    db.close()


def _create(c: PgConnection) -> str:
    return task_store.create_task(c, title="a task", description="", plan="p", priority=1,  # type: ignore[arg-type]
                                  verification=Verification(), depends_on=[], context={}, created_by="user:me",
                                  now=NOW).id


def test_the_store_jobs_run_on_it_as_on_sqlite(postgres_cluster: PostgresCluster, postgres_url: str) -> None:
    with_password = postgres_url.replace("postgresql://muxd@", "postgresql://muxd:s3cret@")
    db = PgDatabase(with_password)
    try:
        assert "s3cret" not in db.path and db.path.startswith("postgresql://muxd:***@/")
        assert db.call_sync(schema_version) == len(PG_MIGRATIONS)

        async def work() -> tuple[bool, str | None]:
            task_id = await db.call(_create, "creating a task")
            claimed, fresh = await db.call(lambda c: task_store.claim(c, task_id, "agent:%1", 60, NOW), "claiming")
            return fresh, (await db.call(lambda c: task_store.get_task(c, task_id), "reading")).claimed_by

        assert asyncio.run(work()) == (True, "agent:%1")
    finally:
        db.close()


def test_a_failed_job_is_one_line_and_leaves_the_connection_clean(pg_database: PgDatabase) -> None:
    def half_done(c: PgConnection) -> None:
        with c.transaction(immediate=True):
            c.execute("INSERT INTO plans (id, name, created_at) VALUES (?, ?, ?)", ("p1", "a plan", NOW))
            c.execute("SELECT no_such_column FROM tasks")

    async def work() -> None:
        with pytest.raises(StoreUnavailable) as caught:
            await pg_database.call(half_done, "creating then reading")
        error = caught.value
        assert error.detail["reason"] == "failed" and error.detail["sqlstate"] == "42703"
        assert error.message.startswith("the database failed: creating then reading: ") and "\n" not in error.message
        # Rolled back whole, and the connection serves the next job.
        assert await pg_database.call(lambda c: c.execute("SELECT count(*) FROM plans").fetchone(), "counting") == (0,)

    asyncio.run(work())


def test_a_conflict_the_server_rolled_back_runs_once_more(pg_database: PgDatabase) -> None:
    tries: list[int] = []

    def conflicting_once(c: PgConnection) -> str:
        tries.append(1)
        if len(tries) == 1:
            c.execute(SERIALIZATION_FAILURE)
        return "done"

    def always_conflicting(c: PgConnection) -> None:
        tries.append(1)
        c.execute(SERIALIZATION_FAILURE)

    async def work() -> None:
        assert await pg_database.call(conflicting_once, "trying") == "done" and len(tries) == 2
        tries.clear()
        with pytest.raises(StoreUnavailable) as caught:
            await pg_database.call(always_conflicting, "trying")
        assert len(tries) == 2 and caught.value.detail["reason"] == "locked"

    asyncio.run(work())


def test_the_server_going_away_fails_the_calls_and_its_return_needs_no_restart() -> None:
    with PostgresCluster() as cluster:
        db = PgDatabase(cluster.url(cluster.create_database()), busy_timeout_s=2.0)
        try:
            count = "SELECT count(*) FROM tasks"

            async def read(doing: str) -> object:
                return await db.call(lambda c: c.execute(count).fetchone(), doing)

            assert asyncio.run(read("counting")) == (0,)
            cluster.stop_server()
            for doing in ("counting with the connection broken", "counting with no server"):
                with pytest.raises(StoreUnavailable) as caught:
                    asyncio.run(read(doing))
                assert caught.value.detail["reason"] == "unreachable", caught.value.message
                assert caught.value.message.startswith("the database cannot be reached: ")
                assert "\n" not in caught.value.message
            cluster.start_server()
            assert asyncio.run(read("counting again")) == (0,)
        finally:
            db.close()


def test_opening_refuses_a_database_it_cannot_use(postgres_cluster: PostgresCluster, postgres_url: str) -> None:
    with pytest.raises(StoreUnavailable) as caught:
        PgDatabase(postgres_cluster.url("no_such_database"))
    assert caught.value.detail["reason"] == "cant_open" and "opening postgresql://" in caught.value.message
    with pytest.raises(StoreUnavailable) as caught:
        PgDatabase(postgres_cluster.url().replace(str(postgres_cluster.directory).replace("/", "%2F"), "%2Fnowhere"))
    assert caught.value.detail["reason"] == "unreachable"
    db = PgDatabase(postgres_url)
    db.call_sync(lambda c: c.execute("UPDATE muxd_schema SET version = ?", (len(PG_MIGRATIONS) + 1,)))
    db.close()
    with pytest.raises(Internal, match="newer than this muxd"):
        PgDatabase(postgres_url)


def test_tokens_live_in_postgresql_across_a_restart(postgres_url: str) -> None:
    """The access layer (daemon/access/control.py) on MUXD_DB=postgresql://…, as test_store.py's
    reopen test on SQLite: what a user made survives, what a pane bound does not."""
    env = {"MUXD_DB": postgres_url}
    access = AccessControl.open("a", env)

    async def changes() -> tuple[str, str, str]:
        _, user_secret = await access.create_token(tier="execute_basic", name="ci-bot")
        revoked, revoked_secret = await access.create_token(tier="admin", name="old")
        await access.revoke(revoked, "test")
        return user_secret, revoked_secret, access.issue_agent_token("%3")

    try:
        user_secret, revoked_secret, agent_secret = asyncio.run(changes())
        agent = pane_principal("%3", access.db.host)  # agent:%3@host: a database hosts share
        assert access.principal_for(agent_secret).name == agent
        assert isinstance(access.db, PgDatabase)
    finally:
        access.close()
    again = AccessControl.open("a", env)  # as a restarted daemon
    try:
        assert again.principal_for(user_secret).name == "token:ci-bot"
        for gone in (revoked_secret, agent_secret):
            with pytest.raises(Unauthorized):
                again.principal_for(gone)
        names = {t.name: t.revoked_reason for t in again.tokens(include_revoked=True)}
        assert names == {"ci-bot": None, "old": "test", agent: "pane gone (server restarted)"}
    finally:
        again.close()
