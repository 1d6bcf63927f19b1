"""Starting a daemon: the scrollback budget from the environment or the flag, checked."""

from __future__ import annotations

import pytest

from muxd.config import DEFAULT_SCROLLBACK_BYTES, SCROLLBACK_BYTES_MAX
from muxd.daemon.main import parse_flags, scrollback_budget
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


def test_the_daemon_takes_its_three_flags_in_either_form_and_refuses_anything_else() -> None:
    assert parse_flags(["--name", "work", "--ready-fd=5", "--scrollback-bytes", "1024"]) == {
        "--name": "work", "--ready-fd": "5", "--scrollback-bytes": "1024"}
    assert parse_flags([]) == {}
    for argv in (["--bogus"], ["work"], ["--name"], ["--ready-fd", "5", "--nam", "x"]):
        with pytest.raises(BadRequest):
            parse_flags(argv)
