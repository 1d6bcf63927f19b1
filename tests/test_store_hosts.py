"""Host identity (MUXD_HOST, store/hosts.py; issue 30): every row says which daemon wrote it, and
what a start assumes is its own (the pane tokens and grants of its last run, the executions it
left running, the audit rows it trims) is only its host's, on SQLite and on a PostgreSQL
database two "hosts" share. On the shared database pane principals name their host."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from muxd.config import HOST_NAME_MAX_CHARS
from muxd.daemon.access.control import AccessControl
from muxd.errors import BadRequest, Conflict, Unauthorized
from muxd.executions.record import Execution
from muxd.store import audit, knowledge, task_store, task_verdicts, tokens
from muxd.store.audit_row import AuditRow
from muxd.store.database import Database, driver_error
from muxd.store.execution_rows import COLUMNS, SELECT_COLUMNS, UPSERT, to_row
from muxd.store.execution_store import ExecutionQuery
from muxd.store.hosts import host_from_env, host_of, pane_principal
from muxd.store.opening import open_database
from muxd.store.schema import MIGRATIONS
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.store.tokens import TokenRecord
from muxd.tasks.model import Verification
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

NOW = 1_700_000_000.0
HOST_TABLES = ("executions", "tasks", "task_events", "task_reviews", "knowledge_entries", "audit", "tokens",
               "grants")


# ---------------------------------------------------------------- MUXD_HOST

def test_the_host_is_muxd_host_else_the_hostname_and_a_bad_one_is_one_line() -> None:
    assert host_from_env({"MUXD_HOST": " build-01.example "}) == "build-01.example"
    assert host_from_env({}) == host_from_env({"MUXD_HOST": " "})
    assert host_from_env({}) in (socket.gethostname(), socket.gethostname().split(".")[0])
    for bad in ("two words", "agent@b", "-lead", "x" * (HOST_NAME_MAX_CHARS + 1), "ünï"):
        with pytest.raises(BadRequest) as caught:
            host_from_env({"MUXD_HOST": bad})
        assert caught.value.message == (f"MUXD_HOST must be 1-{HOST_NAME_MAX_CHARS} letters, digits, '.', '_' or "
                                        f"'-' (starting with a letter or digit), got {bad!r}")


def test_a_bad_host_stops_the_start_with_one_line() -> None:
    server = MuxdTestServer(env={"MUXD_HOST": "a b"})
    try:
        result = server.cli("start-server")
        assert result.returncode == 1
        assert result.stderr.strip() == ("muxd: MUXD_HOST must be 1-63 letters, digits, '.', '_' or '-' (starting "
                                         "with a letter or digit), got 'a b'")
    finally:
        server.stop()


def test_a_daemon_writes_its_host_on_its_rows() -> None:
    """A real daemon on SQLite: its panes' tokens are stored as MUXD_HOST's, named as before."""
    server = MuxdTestServer(env={"MUXD_HOST": "alpha"}).start()
    try:
        server.cli("new-session", "-d", "-s", "work", check=True)
        path = server.env["MUXD_DB"]

        def rows() -> list[tuple[str, str]]:
            db = sqlite3.connect(path)
            try:
                return db.execute("SELECT name, host FROM tokens").fetchall()
            finally:
                db.close()

        pane = server.panes("work")[0]["id"]
        assert wait_until(rows, message="the pane's token stored") == [(f"agent:{pane}", "alpha")]
        assert json.loads(server.cli("server", "status", "--json", check=True).stdout)["host"] == "alpha"
        assert "\nhost " in server.cli("server", "status", check=True).stdout
    finally:
        server.stop()


# ---------------------------------------------------------------- rows, on both databases

@pytest.fixture
def connect_store(connect_either: Callable[..., sqlite3.Connection]) -> Callable[..., sqlite3.Connection]:
    return connect_either


def token(token_id: str, name: str, *, panes: tuple[str, ...] | None = None) -> TokenRecord:
    return TokenRecord(id=token_id, name=name, hash=f"sha-{token_id}", kind="agent" if panes else "user",
                       tier="execute_basic", panes=panes, created_at=NOW)


def execution(n: int, status: str = "running") -> Execution:
    return Execution(id=f"exec_{n}_{n:08x}", pane_id="%1", pane_key=f"run/%{n}", agent_name="a", kind="command",
                     status=status, started_at=NOW + n)  # type: ignore[arg-type]


def test_every_row_says_the_host_of_the_connection_that_wrote_it(
        connect_store: Callable[..., sqlite3.Connection]) -> None:
    c = connect_store(host="alpha")
    assert host_of(c) == "alpha"
    task = task_store.create_task(c, title="t", description="", plan=None, priority=1, verification=Verification(),
                                  depends_on=[], context={}, created_by="user:me", now=NOW)
    task_verdicts.review(c, task.id, "user:me", "comment", comment="fine", now=NOW)
    knowledge.add_entry(c, "words", title=None, tags=[], source="manual", created_by=None, now=NOW)
    c.execute(UPSERT, to_row(execution(1)))
    audit.append(c, [AuditRow(ts=NOW, principal="system", kind="mcp", tool="t", args_sha256="0", status="ok",
                    error_code=None, rows=0, latency_ms=0.0)])
    tokens.add_grant(c, token("tk-1", "agent:%1", panes=("%1",)), "%1", NOW)
    hosts = {table: c.execute(f"SELECT DISTINCT host FROM {table}").fetchall() for table in HOST_TABLES}
    assert hosts == {table: [("alpha",)] for table in HOST_TABLES}
    c.execute(UPSERT, to_row(execution(1, "completed")))  # an update keeps the host that wrote it first
    assert c.execute("SELECT status, host FROM executions").fetchall() == [("completed", "alpha")]


def test_a_start_forgets_only_its_own_hosts_pane_bindings(connect_store: Callable[..., sqlite3.Connection]) -> None:
    a, b = connect_store(host="a"), connect_store(host="b")
    tokens.insert_token(a, token("tk-u1", "ci-bot"))
    tokens.add_grant(a, token("tk-a3", "agent:%3", panes=("%3",)), "%3", NOW)
    tokens.add_grant(b, token("tk-b3", "agent:%3", panes=("%3",)), "%3", NOW)  # the same name: another host's
    with pytest.raises(driver_error(b)):  # a token not bound to panes is the fleet's: its name is unique there
        tokens.insert_token(b, token("tk-u2", "ci-bot"))
    assert [t.id for t in tokens.load_tokens(a)] == ["tk-a3", "tk-u1"]
    assert [t.id for t in tokens.load_tokens(b)] == ["tk-b3", "tk-u1"]  # never another host's pane %3
    tokens.remove_grants_of_pane(b, "%3")  # b's pane %3 went; a's stays granted
    assert tokens.load_grants(a) == {"tk-a3": {"%3"}} and tokens.load_grants(b) == {}
    tokens.add_grant(b, token("tk-b3", "agent:%3", panes=("%3",)), "%3", NOW)
    assert tokens.forget_pane_bindings(b, NOW + 1) == 1  # b restarts
    assert tokens.load_grants(b) == {} and tokens.load_grants(a) == {"tk-a3": {"%3"}}
    live = {t.id for t in tokens.load_tokens(a) + tokens.load_tokens(b) if t.revoked_at is None}
    assert live == {"tk-u1", "tk-a3"}


def test_each_host_trims_only_the_audit_rows_it_wrote(connect_store: Callable[..., sqlite3.Connection]) -> None:
    a, b = connect_store(host="a"), connect_store(host="b")

    def rows(n: int, start: int) -> list[AuditRow]:
        return [AuditRow(ts=NOW + start + i, principal="system", kind="mcp", tool="t", args_sha256="0", status="ok",
                    error_code=None, rows=0, latency_ms=0.0)
                for i in range(n)]

    audit.append(a, rows(6, 0), keep_rows=4, prune_every=100)
    audit.append(b, rows(94, 6), keep_rows=4, prune_every=100)  # ids pass 100 in b's batch: b trims its own
    left = dict(a.execute("SELECT host, count(*) FROM audit GROUP BY host").fetchall())
    assert left == {"a": 6, "b": 4}
    audit.append(a, rows(100, 100), keep_rows=4, prune_every=100)  # a's turn: its old rows go, b's stay
    left = dict(a.execute("SELECT host, count(*) FROM audit GROUP BY host").fetchall())
    assert left == {"a": 4, "b": 4}


# ---------------------------------------------------------------- two daemons, one database

@pytest.fixture(params=["sqlite", "postgresql"])
def open_host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Database]]:
    """Opens the one database of the test as a daemon of the host named does (Database or
    PgDatabase, as open_database picks); each is closed after the test."""
    location = str(tmp_path / "fleet.db") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened: list[Database] = []

    def open_host(host: str) -> Database:
        opened.append(open_database(location, host=host))
        return opened[-1]

    yield open_host
    for db in opened:
        db.close()


def test_a_restart_of_host_b_interrupts_and_revokes_only_bs(open_host: Callable[[str], Database]) -> None:
    """Hosts A and B share a database, each with a pane %1 (its token) and a running execution.
    B's daemon dies and starts again: B's execution is interrupted and B's pane token revoked,
    A's go on; on PostgreSQL each pane's principal names its host, on SQLite it stays agent:%1."""
    db_a, db_b = open_host("a"), open_host("b")
    access_a, access_b = AccessControl(db_a), AccessControl(db_b)
    secret_a, secret_b = access_a.issue_agent_token("%1"), access_b.issue_agent_token("%1")
    names = (access_a.principal_for(secret_a).name, access_b.principal_for(secret_b).name)
    assert names == ((pane_principal("%1", "a"), pane_principal("%1", "b")) if db_a.shared else ("agent:%1",) * 2)
    assert len(access_a.agent_token_of("%1").id) == (19 if db_a.shared else 11)  # tk- and 16 or 8 hex
    for n, db in ((1, db_a), (2, db_b)):
        db.call_sync(lambda c, n=n: c.execute(UPSERT, to_row(execution(n))))
    db_b.call_sync(lambda c: None)  # b's token, written in the background, is in; then b dies (kill -9)

    again = open_host("b")  # b's next start: what its daemon does before it serves
    restarted = AccessControl(again)
    interrupted = asyncio.run(SqliteExecutionStore(again).interrupt_running(time.time()))
    assert interrupted == 1
    statuses = db_a.call_sync(lambda c: c.execute("SELECT host, status FROM executions ORDER BY host").fetchall())
    assert statuses == [("a", "running"), ("b", "interrupted")]
    live = db_a.call_sync(tokens.load_tokens)  # as a's next read of the tokens finds them
    assert [(t.name, t.revoked_at) for t in live] == [(names[0], None)]
    assert restarted.tokens() == [] and restarted.tokens(include_revoked=True)[0].revoked_reason == \
        "pane gone (server restarted)"
    for access in (access_a, access_b, restarted):
        access.close()


def test_rows_from_before_hosts_were_kept_are_the_files_own(tmp_path: Path) -> None:
    """A file of an older muxd (schema 8): its rows have host '' after the upgrade, and the
    daemon, which had the file to itself, still interrupts what it left running."""
    path = tmp_path / "old.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript("BEGIN; " + "; ".join(MIGRATIONS[:8]) + "; PRAGMA user_version = 8; COMMIT;")
    old.execute(f"INSERT INTO executions ({SELECT_COLUMNS}) VALUES ({', '.join('?' * len(COLUMNS))})",
                to_row(execution(1)))
    old.close()
    db = Database(str(path), host="alpha")  # opened by a newer muxd: migrated
    try:
        assert db.call_sync(lambda c: c.execute("SELECT host FROM executions").fetchall()) == [("",)]
        assert asyncio.run(SqliteExecutionStore(db).interrupt_running(time.time())) == 1
    finally:
        db.close()


def test_a_start_resumes_only_the_checks_of_tasks_completed_through_its_host(
        connect_store: Callable[..., sqlite3.Connection]) -> None:
    a, b = connect_store(host="a"), connect_store(host="b")
    checked = Verification(kind="commands", commands=["make test"])
    tasks = [task_store.create_task(a, title=f"t{n}", description="", plan=None, priority=1, verification=checked,
                                    depends_on=[], context={}, created_by="user:me", now=NOW) for n in range(2)]
    for task, host, agent in ((tasks[0], a, "agent:%1@a"), (tasks[1], b, "agent:%1@b")):
        task_store.claim(host, task.id, agent, 60, NOW)
        task_store.complete(host, task.id, agent, output=None, learnings=[], knowledge_quota=0, now=NOW)
    task_verdicts.review(b, tasks[0].id, "user:me", "comment", comment="looks fine", now=NOW)  # b writes a's next event
    assert [t.id for t in task_store.pending_verifications(a)] == [tasks[0].id]
    assert [t.id for t in task_store.pending_verifications(b)] == [tasks[1].id]


# ---------------------------------------------------------------- a host filter, the fleet by default

def test_history_and_tasks_answer_for_the_fleet_or_for_one_host(open_host: Callable[[str], Database]) -> None:
    db_a, db_b = open_host("a"), open_host("b")
    for n, db in ((1, db_a), (2, db_b), (3, db_b)):
        db.call_sync(lambda c, n=n: c.execute(UPSERT, to_row(execution(n, "success"))))
        db.call_sync(lambda c, n=n: task_store.create_task(
            c, title=f"t{n}", description="", plan=None, priority=n, verification=Verification(), depends_on=[],
            context={}, created_by="user:me", now=NOW))
    history = SqliteExecutionStore(db_a)

    async def listed(host: str | None) -> tuple[list[str], int]:
        rows, total = await history.list(ExecutionQuery(host=host))
        return [e.id for e in rows], total

    assert asyncio.run(listed(None)) == ([execution(n).id for n in (3, 2, 1)], 3)  # newest first, every host's
    assert asyncio.run(listed("b")) == ([execution(n).id for n in (3, 2)], 2)
    assert asyncio.run(listed("c")) == ([], 0)

    def titles(host: str | None) -> tuple[list[str], int]:
        page, total = db_a.call_sync(lambda c: task_store.list_tasks(
            c, states=None, plan=None, claimed_by=None, limit=10, offset=0, now=NOW, host=host))
        return [t.title for t in page], total

    assert titles(None) == (["t1", "t2", "t3"], 3) and titles("a") == (["t1"], 1) and titles("b") == (["t2", "t3"], 2)
    actionable = db_a.call_sync(lambda c: task_store.next_actionable(c, plan=None, priority_lte=None, limit=10,
                                                                     now=NOW, host="b"))
    assert [t.title for t in actionable] == ["t2", "t3"]
    taken = db_a.call_sync(lambda c: task_store.claim_next(c, "agent:%1@a", 60, NOW, host="b"))
    assert taken is not None and taken.title == "t2"  # b's first, though a's t1 comes before it


def test_a_token_name_another_host_took_meanwhile_is_a_conflict(open_host: Callable[[str], Database]) -> None:
    """Each daemon knows the tokens it loaded: one made through another host since is the
    database's to refuse, as the same Conflict a daemon gives for a name it knows."""
    access_a, access_b = AccessControl(open_host("a")), AccessControl(open_host("b"))
    try:
        made, _ = asyncio.run(access_a.create_token(tier="execute_basic", name="ci-bot"))
        with pytest.raises(Conflict, match="^a live token is already named ci-bot$"):
            asyncio.run(access_b.create_token(tier="execute_basic", name="ci-bot"))
        assert all(t.id == made.id for t in access_b.tokens())  # nothing half-made (a's, once b hears of it)
        _, secret = asyncio.run(access_b.create_token(tier="execute_basic", name="deploy"))
        assert access_b.principal_for(secret).name == "token:deploy"  # and b goes on serving
    finally:
        access_a.close()
        access_b.close()


def test_each_host_prunes_only_the_history_it_wrote(open_host: Callable[[str], Database]) -> None:
    db_a, db_b = open_host("a"), open_host("b")
    for n, db in ((1, db_a), (2, db_b), (3, db_a), (4, db_b)):
        db.call_sync(lambda c, n=n: c.execute(UPSERT, to_row(execution(n, "success"))))
    history_b = SqliteExecutionStore(db_b)
    assert asyncio.run(history_b.prune(older_than=NOW + 10, keep_rows=None)) == 2  # b's, all old: a's stay
    assert asyncio.run(history_b.prune(older_than=None, keep_rows=1)) == 0  # the oldest rows left are a's
    left = db_a.call_sync(lambda c: c.execute("SELECT host, count(*) FROM executions GROUP BY host").fetchall())
    assert left == [("a", 2)]
    assert asyncio.run(SqliteExecutionStore(db_a).prune(older_than=None, keep_rows=1)) == 1


def test_tokens_made_or_revoked_through_one_host_hold_on_the_other_at_once(postgres_url: str) -> None:
    """On a shared database: a user token made through host A opens connections on host B, and
    revoked through A is refused by B (and B's connections greeted with it closed) without B
    starting again; A's pane tokens are never B's."""
    access_a = AccessControl(open_database(postgres_url, host="a"))
    access_b = AccessControl(open_database(postgres_url, host="b"))
    revoked_on_b: list[str] = []
    access_b.on_revoked = revoked_on_b.append
    try:
        token, secret = asyncio.run(access_a.create_token(tier="execute_basic", name="ci-bot"))
        pane_secret = access_a.issue_agent_token("%1")

        def welcomed() -> bool:
            try:
                return access_b.principal_for(secret).name == "token:ci-bot"
            except Unauthorized:
                return False

        wait_until(welcomed, message="b welcomes the token a made")
        asyncio.run(access_a.create_token(tier="view_only", name="later"))  # after a's pane token, told in order
        wait_until(lambda: "later" in {t.name for t in access_b.tokens()}, message="b knows a's later token")
        with pytest.raises(Unauthorized):
            access_b.principal_for(pane_secret)  # a's pane %1 is not b's
        asyncio.run(access_a.revoke(token, "leaked"))
        wait_until(lambda: not welcomed(), message="b refuses the token a revoked")
        assert revoked_on_b == [token.id]
        assert access_b.find_token(token.id).revoked_reason == "leaked"
    finally:
        access_a.close()
        access_b.close()


def test_a_revocation_told_while_a_host_was_not_listening_still_reaches_it(postgres_url: str) -> None:
    """The listeners lose their connections (their backends ended) and a token is revoked meanwhile:
    once b listens again it reads every token anew, so the revocation holds there all the same."""
    access_a = AccessControl(open_database(postgres_url, host="a"))
    access_b = AccessControl(open_database(postgres_url, host="b"))
    try:
        token, secret = asyncio.run(access_a.create_token(tier="execute_basic", name="ci-bot"))
        wait_until(lambda: access_b.is_live(token.hash), message="b knows the token")
        ended = access_a.db.call_sync(lambda c: c.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'").fetchone()[0])
        assert ended == 2
        asyncio.run(access_a.revoke(token, "leaked"))
        wait_until(lambda: not access_b.is_live(token.hash), message="b refuses the revoked token")
        with pytest.raises(Unauthorized):
            access_b.principal_for(secret)
    finally:
        access_a.close()
        access_b.close()
