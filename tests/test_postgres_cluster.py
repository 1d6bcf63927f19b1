"""The private PostgreSQL cluster of muxd/testing/postgres.py, for real: it accepts connections
on its Unix socket only, runs as an unprivileged user when the tests run as root, hands each
test an empty database of its own, and leaves no server nor directory behind; a server that
cannot start says why at once instead of timing out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from muxd.testing.postgres import PostgresCluster
from muxd.testing.wait import wait_until

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")


def _uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid for {pid}")


def _gone(pid: int) -> bool:
    """No such process, or only its exit status left for its parent (pg_ctl's, long gone) to reap."""
    try:
        state = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                     if line.startswith("State:"))
    except FileNotFoundError:
        return True
    return state.split()[1] in ("Z", "X")


def test_a_database_of_its_own_on_a_socket_only(postgres_cluster: PostgresCluster, postgres_url: str) -> None:
    socket_dir = str(postgres_cluster.directory).replace("/", "%2F")
    assert postgres_url.startswith("postgresql://") and f"host={socket_dir}&" in postgres_url
    with psycopg.connect(postgres_url) as conn:
        listen, socket_dirs, tables, pid = conn.execute(
            "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories'), "
            "(SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'), "
            "pg_backend_pid()").fetchone()
        assert (listen, socket_dirs, tables) == ("", str(postgres_cluster.directory), 0)
        conn.execute("CREATE TABLE mine (n int)")
        # Root is refused by initdb and the server: under root the backend runs as the cluster's user.
        owner = os.geteuid() if postgres_cluster.user.uid is None else postgres_cluster.user.uid
        assert _uid_of(pid) == owner != 0


def test_each_test_gets_a_fresh_database(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:  # the previous test's table is not here
        assert conn.execute("SELECT to_regclass('public.mine')").fetchone() == (None,)


def test_a_cluster_leaves_nothing_behind() -> None:
    with PostgresCluster() as cluster:
        postmaster = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
        assert (cluster.directory / f".s.PGSQL.{cluster.port}").is_socket()
        with psycopg.connect(cluster.url()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    assert not cluster.directory.exists()
    # pg_ctl returns once the postmaster removed its pid file, just before it exits.
    wait_until(lambda: _gone(postmaster), message=f"the postmaster {postmaster} gone")


def test_a_server_that_cannot_start_says_why_at_once() -> None:
    cluster = PostgresCluster(settings={"shared_buffers": "'lots'"})
    with pytest.raises(RuntimeError, match="shared_buffers"):
        cluster.start()
    assert not cluster.directory.exists()
