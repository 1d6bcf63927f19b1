"""pytest plugin shipped with muxd: `muxd_server` gives each test a daemon of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from muxd.testing.server import MuxdTestServer


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
