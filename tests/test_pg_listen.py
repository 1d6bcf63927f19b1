"""LISTEN/NOTIFY between daemons sharing a PostgreSQL database (store/pg_listen.py), on a private
cluster: a notification reaches the listeners when its transaction commits and never when it
rolls back, only on its channel; a listener whose server restarts listens again and says it may
have missed some (again until the receiver could read what it missed), as after a notification
its receiver failed on; a channel name is an identifier or refused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from muxd.errors import BadRequest, StoreUnavailable
from muxd.store.database import transaction
from muxd.testing.postgres import PostgresCluster
from muxd.testing.wait import wait_until

pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]')")
from muxd.store.pg_connection import PgConnection, connect  # noqa: E402
from muxd.store.pg_listen import PgListener, notify  # noqa: E402


@pytest.fixture
def sender(postgres_url: str) -> Iterator[PgConnection]:
    conn = connect(postgres_url)
    yield conn
    conn.close()


def test_a_notification_arrives_when_its_transaction_commits(postgres_url: str, sender: PgConnection) -> None:
    heard: list[tuple[str, str]] = []
    listener = PgListener(postgres_url, ("muxd_tasks",), lambda channel, payload: heard.append((channel, payload)))
    listener.start()
    try:
        wait_until(listener.listening.is_set, message="the listener listening")
        with pytest.raises(RuntimeError):
            with transaction(sender):
                notify(sender, "muxd_tasks", "rolled back")
                raise RuntimeError("the change failed")
        notify(sender, "muxd_other", "not listened to")
        with transaction(sender):
            notify(sender, "muxd_tasks", "task 1")
            assert heard == []  # not before the commit
        notify(sender, "muxd_tasks", "task 2")
        wait_until(lambda: len(heard) >= 2, message="two notifications")
        assert heard == [("muxd_tasks", "task 1"), ("muxd_tasks", "task 2")]
    finally:
        listener.stop()


def test_a_notification_its_receiver_failed_on_is_read_again_as_missed(postgres_url: str,
                                                                       sender: PgConnection) -> None:
    heard: list[str] = []
    gaps: list[bool] = []

    def receive(_channel: str, payload: str) -> None:
        heard.append(payload)
        raise StoreUnavailable("the database cannot be reached: reading the token", reason="unreachable")

    listener = PgListener(postgres_url, ("muxd_tasks",), receive, on_gap=lambda: gaps.append(True)).start()
    try:
        wait_until(listener.listening.is_set, message="the listener listening")
        notify(sender, "muxd_tasks", "token 1")
        wait_until(lambda: gaps, message="the failed notification read again as missed")
        assert heard == ["token 1"] and gaps == [True]
    finally:
        listener.stop()


def test_a_listener_listens_again_after_its_server_restarts() -> None:
    with PostgresCluster() as cluster:
        url = cluster.url(cluster.create_database())
        heard: list[str] = []
        gaps: list[bool] = []

        def gap() -> None:  # its first read fails: it is asked again until one works
            gaps.append(len(gaps) > 0)
            if not gaps[-1]:
                raise StoreUnavailable("the database cannot be reached: reading the tokens", reason="unreachable")

        listener = PgListener(url, ("muxd_tasks",), lambda _, payload: heard.append(payload), on_gap=gap)
        listener.start()
        try:
            wait_until(listener.listening.is_set, message="the listener listening")
            cluster.stop_server()
            wait_until(lambda: not listener.listening.is_set(), message="the listener losing its server")
            cluster.start_server()
            wait_until(lambda: gaps[-1:] == [True], message="the listener listening again, its gap read", timeout=30)
            sender = connect(url)
            try:
                notify(sender, "muxd_tasks", "after the restart")
            finally:
                sender.close()
            wait_until(lambda: heard, message="the notification after the restart")
            assert heard == ["after the restart"] and gaps == [False, True]
        finally:
            listener.stop()


def test_one_listener_carries_several_channels_each_to_its_own_receiver(postgres_url: str,
                                                                        sender: PgConnection) -> None:
    """A daemon's one connection (PgDatabase.listener): a channel heard while it runs is LISTENed
    at its next look (its event set, its gap told when it asks), each notification goes to its
    channel's receiver alone, and a channel no longer heard tells nothing."""
    heard: list[tuple[str, str]] = []
    gaps: list[str] = []
    listener = PgListener(postgres_url).start()
    try:
        tasks = listener.hear("muxd_tasks", lambda channel, payload: heard.append(("tasks", payload)))
        wait_until(tasks.is_set, message="muxd_tasks listened")
        fleet = listener.hear("muxd_fleet", lambda channel, payload: heard.append(("fleet", payload)),
                              on_gap=lambda: gaps.append("fleet"), gap_first=True)
        wait_until(fleet.is_set, message="muxd_fleet listened, added while running")
        wait_until(lambda: gaps, message="its first gap")
        notify(sender, "muxd_tasks", "t1")
        notify(sender, "muxd_fleet", "f1")
        wait_until(lambda: len(heard) >= 2, message="both notifications")
        listener.unhear("muxd_tasks")
        notify(sender, "muxd_tasks", "t2")
        notify(sender, "muxd_fleet", "f2")  # after t2 (commit order): t2 would have come first
        wait_until(lambda: ("fleet", "f2") in heard, message="f2")
        assert heard == [("tasks", "t1"), ("fleet", "f1"), ("fleet", "f2")] and gaps == ["fleet"]
        assert listener.channels == ("muxd_fleet",)
    finally:
        listener.stop()


def test_a_channel_is_an_identifier(postgres_url: str, sender: PgConnection) -> None:
    for bad in ("muxd tasks; DROP TABLE tasks", "Tasks", ""):
        with pytest.raises(BadRequest, match="notification channel"):
            PgListener(postgres_url, (bad,), lambda *_: None)
        with pytest.raises(BadRequest, match="notification channel"):
            notify(sender, bad, "x")
