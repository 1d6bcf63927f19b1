"""pytest plugin shipped with muxd: `muxd_server` gives each test a daemon of its own,
`postgres_url` a fresh database in a private PostgreSQL cluster (one per test session and
xdist worker), `private_sshd` an OpenSSH server on a loopback port (as many), and
pytest-timeout's per-test ceiling counts the machine's time (patience.py), as every wait in
muxd.testing does."""

from __future__ import annotations

import signal
import threading
from collections.abc import Generator, Iterator
from types import FrameType
from typing import Any

import pytest

from muxd.testing.patience import RECHECK_S, Deadline, stretched
from muxd.testing.postgres import PostgresCluster, PostgresUnavailable
from muxd.testing.server import MuxdTestServer
from muxd.testing.sshd import PrivateSshd, SshdUnavailable
# The web view's fixtures (web_view, browser), offered by this plugin too; Selenium is imported only by a browser test.
from muxd.testing.web import _chromium, browser, web_view  # noqa: F401


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    """pytest-timeout's signal timer, re-armed for as long as the test's ceiling, counted in
    machine time (patience.Deadline), lasts: a load that comes during the test stretches it."""
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # pytest-timeout's own timer, on a ceiling stretched as the test started (below)
    from pytest_timeout import timeout_sigalrm

    deadline = Deadline(settings.timeout)

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        if not deadline.expired():
            signal.setitimer(signal.ITIMER_REAL, max(deadline.remaining_s(), RECHECK_S))
            return
        item.config.get_terminal_writer().line(f"muxd: the test's ceiling was {deadline.describe()}")
        timeout_sigalrm(item, settings)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # pytest-timeout's cancel hook calls it
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout)
    return True


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Where the timer above cannot run (pytest-timeout's thread method), stretch the test's
    ceiling (its own `timeout` marker, else the option's) by the machine's load as it starts.
    Outside pytest-timeout's own wrapper, which reads it."""
    if item.config.pluginmanager.hasplugin("timeout"):
        marker = item.get_closest_marker("timeout")
        options = {k: v for k, v in marker.kwargs.items() if k != "timeout"} if marker else {}
        method = options.get("method") or getattr(item.config, "_env_timeout_method", None)
        timeout = _test_timeout_s(item, marker)
        if timeout and method != "signal":
            item.add_marker(pytest.mark.timeout(stretched(timeout), **options), append=False)
    return (yield)


def _test_timeout_s(item: pytest.Item, marker: pytest.Mark | None) -> float | None:
    if marker is not None and (marker.args or "timeout" in marker.kwargs):
        value = marker.args[0] if marker.args else marker.kwargs["timeout"]
    else:
        value = getattr(item.config, "_env_timeout", None)  # --timeout or the ini's, as pytest-timeout read it
    return float(value) if value else None


def _running_server() -> Iterator[MuxdTestServer]:
    server = MuxdTestServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def muxd_server() -> Iterator[MuxdTestServer]:
    """A running muxd daemon on a private socket directory, stopped after the test."""
    yield from _running_server()


@pytest.fixture(scope="module")
def muxd_module_server() -> Iterator[MuxdTestServer]:
    """One running daemon for all of a module's tests (each keeps to sessions of its own and
    puts back the global options it sets): a daemon's start costs more than many a test."""
    yield from _running_server()


@pytest.fixture
def muxd_unstarted() -> Iterator[MuxdTestServer]:
    """A private socket directory and server name with no daemon yet (for start-up tests)."""
    server = MuxdTestServer()
    try:
        yield server
    finally:
        server.stop()


def running_cluster() -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster (muxd/testing/postgres.py), deleted after; the test skips,
    saying so, where PostgreSQL is not installed."""
    try:
        cluster = PostgresCluster()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    with cluster:
        yield cluster


def fresh_database(cluster: PostgresCluster) -> Iterator[str]:
    """The `postgresql://` URL of a new empty database of `cluster`, dropped after (its server
    started again first if the test stopped it)."""
    name = cluster.create_database()
    try:
        yield cluster.url(name)
    finally:
        if not cluster.started:
            cluster.start_server()
        cluster.drop_database(name)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster for the session (tests that stop its server have their own)."""
    yield from running_cluster()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """The `postgresql://` URL of a new empty database of `postgres_cluster`, dropped after the test."""
    yield from fresh_database(postgres_cluster)


@pytest.fixture(scope="session")
def private_sshd() -> Iterator[PrivateSshd]:
    """An OpenSSH server on a loopback port letting this user in by a throwaway key
    (muxd/testing/sshd.py); the test skips, saying so, where sshd or ssh is not installed."""
    try:
        sshd = PrivateSshd()
    except SshdUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield sshd
    finally:
        sshd.stop()
