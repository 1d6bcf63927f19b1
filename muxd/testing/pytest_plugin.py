"""pytest plugin shipped with muxd: `muxd_server` gives each test a daemon of its own, and
pytest-timeout's per-test ceiling counts the machine's time, as every wait in muxd.testing does."""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest

from muxd.testing.patience import stretched
from muxd.testing.server import MuxdTestServer


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Stretch the test's pytest-timeout ceiling (its own `timeout` marker, else the ini's) by
    the machine's load as it starts: on a loaded machine a test's waits take longer, and the
    ceiling must not cut them short. Outside pytest-timeout's own wrapper, which reads it."""
    if item.config.pluginmanager.hasplugin("timeout"):
        marker = item.get_closest_marker("timeout")
        options = {k: v for k, v in marker.kwargs.items() if k != "timeout"} if marker else {}
        timeout = _test_timeout_s(item, marker)
        if timeout:
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
