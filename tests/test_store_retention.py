"""Retention settings from the environment: defaults, overrides, and errors that name the variable."""

from __future__ import annotations

import pytest

from muxd.config import EXECUTIONS_KEEP_DAYS, EXECUTIONS_KEEP_ROWS, TRANSCRIPT_MAX_BYTES
from muxd.errors import BadRequest
from muxd.store.retention import Retention, retention_from_env


def test_defaults_and_overrides() -> None:
    assert retention_from_env({}) == Retention(EXECUTIONS_KEEP_DAYS, EXECUTIONS_KEEP_ROWS, TRANSCRIPT_MAX_BYTES)
    assert retention_from_env({"MUXD_HISTORY_KEEP_DAYS": ""}).keep_days == EXECUTIONS_KEEP_DAYS
    got = retention_from_env({"MUXD_HISTORY_KEEP_DAYS": "7", "MUXD_HISTORY_KEEP_ROWS": "50_000",
                              "MUXD_TRANSCRIPT_MAX_BYTES": " 0 "})
    assert got == Retention(keep_days=7, keep_rows=50_000, transcript_max_bytes=0)
    assert got.older_than(now=10 * 86_400) == 3 * 86_400


@pytest.mark.parametrize(("name", "value", "says"), [
    ("MUXD_HISTORY_KEEP_DAYS", "thirty", "MUXD_HISTORY_KEEP_DAYS must be a whole number of days, got 'thirty'"),
    ("MUXD_HISTORY_KEEP_DAYS", "0", "MUXD_HISTORY_KEEP_DAYS must be at least 1 days, got 0"),
    ("MUXD_HISTORY_KEEP_ROWS", "1.5", "MUXD_HISTORY_KEEP_ROWS must be a whole number of rows, got '1.5'"),
    ("MUXD_TRANSCRIPT_MAX_BYTES", "-1", "MUXD_TRANSCRIPT_MAX_BYTES must be in 0..268435456 bytes, got -1"),
    ("MUXD_TRANSCRIPT_MAX_BYTES", str(2**40), "MUXD_TRANSCRIPT_MAX_BYTES must be in 0..268435456 bytes"),
])
def test_bad_values_are_refused_by_name(name: str, value: str, says: str) -> None:
    with pytest.raises(BadRequest, match="^" + says.replace(".", r"\.")):
        retention_from_env({name: value})
