"""A damaged database is refused loudly, never replaced by memory: random bytes, flipped bytes in
a page or a truncated file at MUXD_DB stop the start (start-server, and the autostart of any
command) with one line naming the file and what to do, and leave the file as it was. Damage met
while serving is said by `server status`, and nothing more is acknowledged. `MUXD_DB=:memory:`,
asked for, still runs, and says so."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from muxd.errors import StoreUnavailable
from muxd.executions.record import Execution
from muxd.store.database import Database
from muxd.store.location import MEMORY
from muxd.store.sqlite_executions import SqliteExecutionStore
from muxd.testing.server import MuxdTestServer
from muxd.testing.wait import wait_until

PAGE_BYTES = 4096  # SQLite's default page size, which muxd keeps


def _random_bytes(data: bytes) -> bytes:
    return random.Random(23).randbytes(len(data))


def _flipped_page(data: bytes) -> bytes:
    """Bytes inverted in the middle of page 2 (a b-tree page of the first tables)."""
    start = PAGE_BYTES + 8
    return data[:start] + bytes(b ^ 0xFF for b in data[start:start + 192]) + data[start + 192:]


def _truncated(data: bytes) -> bytes:
    return data[:len(data) // 2 + 100]


def _stopped_with_a_token(server: MuxdTestServer) -> Path:
    """The server's database, closed, holding a token."""
    server.start()
    server.cli("token", "create", "--tier", "admin", "--name", "keeper", check=True)
    server.cli("kill-server", check=True)
    wait_until(lambda: not server.running(), timeout=15, message="the daemon gone")
    path = Path(server.env["MUXD_DB"])
    assert not Path(f"{path}-wal").exists()  # a clean stop checkpointed everything into the file
    return path


@pytest.mark.parametrize("damage", [_random_bytes, _flipped_page, _truncated], ids=["random", "flipped", "truncated"])
def test_a_damaged_file_stops_the_start_with_one_line_and_is_left_alone(
        muxd_unstarted: MuxdTestServer, damage: Callable[[bytes], bytes]) -> None:
    server = muxd_unstarted
    path = _stopped_with_a_token(server)
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    for command in (["start-server"], ["new-session", "-d", "--", "sleep", "600"]):  # the second autostarts
        result = server.cli(*command)
        lock = server.socket_dir / f"{server.name}.lock"
        if result.returncode == 0 and lock.exists():  # started after all: the fixture must stop it
            server.pid = int(lock.read_text().strip())
        assert result.returncode == 1, result
        line = result.stderr.strip()
        assert "\n" not in line and line.startswith(f"muxd: the database {path} is damaged ("), line
        assert line.endswith("muxd will not start on it: move it aside (with its -wal and -shm files) "
                             "or restore it from a backup, then start the server again"), line
        assert not server.socket_path.exists() or not server.running()
    assert path.read_bytes() == damaged  # neither replaced nor written to


def _damage_under_an_open_connection(path: str) -> None:
    """Overwrite every page but the first of `path`, which another connection has open, so that
    it sees the damage: a write of page 1 alone, through SQLite, tells it the file changed, and it
    drops its cache of pages and reads the damaged ones."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file, none in the log
        version = other.execute("PRAGMA user_version").fetchone()[0]
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.seek(PAGE_BYTES)
            fh.write(b"\xa5" * (size - PAGE_BYTES))
        other.execute(f"PRAGMA user_version = {version}")
    finally:
        other.close()


def test_damage_met_while_serving_is_reported_and_nothing_more_is_acknowledged(muxd_server: MuxdTestServer) -> None:
    server = muxd_server
    server.cli("token", "create", "--tier", "admin", "--name", "keeper", check=True)
    path = server.env["MUXD_DB"]
    _damage_under_an_open_connection(path)
    notice = f"muxd: the database {path} is damaged ("
    history = server.cli("history")  # whoever meets it first (a reader, the lease sweeper), all see it
    assert history.returncode == 1 and history.stderr.startswith(notice), history
    added = server.cli("task", "add", "late")
    assert added.returncode == 1 and added.stdout == ""
    assert added.stderr.startswith(notice) and "nothing more is written to it: move it aside" in added.stderr
    status = server.cli("server", "status")
    assert status.returncode == 0 and status.stderr.startswith(notice)
    assert f"DAMAGED: the database {path} is damaged (" in status.stdout
    reported = json.loads(server.cli("server", "status", "--json", check=True).stdout)
    assert reported["database"] == path and "restart the server" in reported["database_problem"]
    again = server.cli("task", "add", "later")  # refused at once now, the file not touched again
    assert again.returncode == 1 and again.stderr.startswith(notice)
    created = server.cli("token", "create", "--tier", "admin", "--name", "late")  # and so are token changes
    assert created.returncode == 1 and created.stdout == "" and created.stderr.startswith(notice)
    listed = {t["name"] for t in json.loads(server.cli("token", "ls", "--json", check=True).stdout)}
    assert listed == {"keeper"}


def test_an_in_memory_database_is_allowed_when_asked_for_and_said(muxd_unstarted: MuxdTestServer) -> None:
    server = muxd_unstarted
    server.env["MUXD_DB"] = MEMORY
    server.start()
    server.cli("token", "create", "--tier", "admin", "--name", "fleeting", check=True)
    status = server.cli("server", "status", check=True)
    assert "nothing is kept after the server stops" in status.stdout and status.stderr == ""
    assert json.loads(server.cli("server", "status", "--json", check=True).stdout)["database"] == MEMORY


def test_damage_a_history_reader_meets_is_the_whole_files(tmp_path: Path) -> None:
    path = str(tmp_path / "h.db")
    db = Database(path)
    store = SqliteExecutionStore(db)

    async def scenario() -> None:
        await store.save(Execution(id="exec_1", pane_id="%1", pane_key="r/%1", agent_name="a", status="success",
                                   started_at=1e9, completed_at=1e9 + 1))
        _damage_under_an_open_connection(path)
        with pytest.raises(StoreUnavailable, match=f"^the database {path} is damaged \\("):
            await store.get("exec_1")  # on a reader's own connection, opened now
        assert db.problem is not None and "nothing more is written to it" in db.problem
        with pytest.raises(StoreUnavailable, match="nothing more is written to it"):  # the writer refuses too
            await store.save(Execution(id="exec_2", pane_id="%1", pane_key="r/%1", agent_name="a", status="running",
                                       started_at=1e9 + 2))

    try:
        asyncio.run(scenario())
    finally:
        store.close()
        db.close()
