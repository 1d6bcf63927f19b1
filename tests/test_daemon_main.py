"""Starting a daemon: the scrollback budget from the environment or the flag, checked."""

from __future__ import annotations

import pytest

from muxd.config import DEFAULT_SCROLLBACK_BYTES, SCROLLBACK_BYTES_MAX
from muxd.daemon.main import scrollback_budget
from muxd.errors import BadRequest
from muxd.testing.server import MuxdTestServer


def test_the_scrollback_budget_comes_from_the_flag_then_the_environment() -> None:
    assert scrollback_budget(None, None) == DEFAULT_SCROLLBACK_BYTES
    assert scrollback_budget(None, "65536") == 65536
    assert scrollback_budget(1024, "65536") == 1024
    for flag, variable in ((None, "lots"), (-1, None), (SCROLLBACK_BYTES_MAX + 1, None)):
        with pytest.raises(BadRequest):
            scrollback_budget(flag, variable)


def test_a_bad_budget_stops_the_start_with_one_line() -> None:
    server = MuxdTestServer(env={"MUXD_SCROLLBACK_BYTES": "lots"})
    try:
        result = server.cli("start-server")
        assert result.returncode == 1
        assert result.stderr.strip() == "muxd: MUXD_SCROLLBACK_BYTES must be a number of bytes, got 'lots'"
    finally:
        server.stop()
